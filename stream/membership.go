package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/segmentio/kafka-go"
)

// DefaultGroupSession is how long a broker keeps a trainer in its run's
// consumer group after the trainer's last heartbeat (MemberConfig.Session):
// a trainer killed with -9 holds its run for that long.
const DefaultGroupSession = 10 * time.Second

// The bounds a broker puts on a session timeout by default
// (group.min.session.timeout.ms and group.max.session.timeout.ms).
const (
	minGroupSession = 6 * time.Second
	maxGroupSession = 5 * time.Minute
)

// memberProtocol names the group protocol a trainer joins with: no
// partitions are assigned by it (the trainer reads every partition itself).
const memberProtocol = "parastream-trainer"

// MemberConfig configures a Member.
type MemberConfig struct {
	Client ClientConfig
	// Group is the run's consumer group. Required.
	Group string
	// Topics are the topics the run reads (named in the group's metadata).
	Topics []string
	// Holder names this process to a second trainer (host, pid, checkpoint
	// directory); "" means the host and pid.
	Holder string
	// Gone, when set, reports whether a live member, by its Holder, is a
	// process known to have ended (a trainer killed on this machine): it
	// is removed from the group (LeaveGroup) instead of holding it until
	// its session expires.
	Gone func(holder string) bool
	// Session is the group's session timeout; 0 means DefaultGroupSession.
	// It is between 6 s and 5 min (a broker's default bounds).
	Session time.Duration
	// Logger receives warnings (heartbeats failing, rejoins); nil discards
	// them.
	Logger *slog.Logger
}

// Validate reports a configuration a Member cannot run with.
func (c MemberConfig) Validate() error {
	if c.Group == "" {
		return errors.New("stream: a member needs a group")
	}
	return CheckGroupSession(c.Session)
}

// CheckGroupSession reports a session timeout outside a broker's default
// bounds, 6 s to 5 min; 0 (DefaultGroupSession) is fine.
func CheckGroupSession(d time.Duration) error {
	if d != 0 && (d < minGroupSession || d > maxGroupSession) {
		return fmt.Errorf("stream: a group session of %v is outside [%v, %v]", d, minGroupSession, maxGroupSession)
	}
	return nil
}

// Member is a process's membership of a consumer group, held through the
// Kafka group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup) for as
// long as it is open: a second process joining the group fails with
// ErrGroupHeld naming this one. A Member heartbeats every third of the
// session and rejoins after a broker restart or a rebalance; OffsetCommit
// carries its generation and member id (Consumer.Commit with
// ConsumerConfig.Member).
type Member struct {
	cfg    MemberConfig
	client *kafka.Client
	log    *slog.Logger
	stop   context.CancelFunc
	done   chan struct{}

	joinMu sync.Mutex // one join at a time: the heartbeats' and Commit's

	mu         sync.Mutex
	id         string
	generation int
	err        error // the membership lost for good (ErrGroupHeld, ErrUnreachable)
}

// JoinGroup makes this process the one live member of cfg.Group, or fails
// with ErrGroupHeld naming the member that holds it. Close leaves the
// group.
func JoinGroup(ctx context.Context, cfg MemberConfig) (*Member, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Session == 0 {
		cfg.Session = DefaultGroupSession
	}
	if cfg.Holder == "" {
		host, _ := os.Hostname()
		cfg.Holder = fmt.Sprintf("host %s, pid %d", host, os.Getpid())
	}
	client, err := cfg.Client.client()
	if err != nil {
		return nil, err
	}
	m := &Member{cfg: cfg, client: client, log: cfg.Logger, done: make(chan struct{})}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	// A live member: fail at once, without joining (a join would make the
	// holder rebalance).
	if err := m.held(ctx, ""); err != nil {
		return nil, err
	}
	if err := m.join(ctx); err != nil {
		return nil, err
	}
	hctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	m.stop = stop
	go m.heartbeat(hctx)
	return m, nil
}

// held returns ErrGroupHeld naming a live member of the group other than
// self, if it has one.
func (m *Member) held(ctx context.Context, self string) error {
	var resp *kafka.DescribeGroupsResponse
	err := m.cfg.Client.retry(ctx, m.log, "describing group "+m.cfg.Group, func() (err error) {
		resp, err = m.client.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{m.cfg.Group}})
		return err
	})
	if err != nil {
		return fmt.Errorf("describing consumer group %s: %w", m.cfg.Group, err)
	}
	for _, g := range resp.Groups {
		if g.Error != nil || g.GroupState == "Empty" || g.GroupState == "Dead" {
			continue
		}
		for _, mm := range g.Members {
			if mm.MemberID == self {
				continue
			}
			if m.cfg.Gone != nil && len(mm.MemberMetadata.UserData) > 0 && m.cfg.Gone(string(mm.MemberMetadata.UserData)) {
				m.log.Info("removing the member of a trainer that has ended from the run's consumer group", "group", m.cfg.Group, "member", string(mm.MemberMetadata.UserData))
				m.leave(ctx, mm.MemberID)
				continue
			}
			return m.heldBy(mm)
		}
	}
	return nil
}

// heldBy is ErrGroupHeld naming member mm and what to do.
func (m *Member) heldBy(mm kafka.DescribeGroupsResponseMember) error {
	holder := string(mm.MemberMetadata.UserData)
	if holder == "" {
		holder = fmt.Sprintf("client %s at %s", mm.ClientID, mm.ClientHost)
	}
	return fmt.Errorf("consumer group %s on %s is %w, a live member (%s): one trainer a run; wait for it to end, or give another --run (a trainer killed without leaving holds the group for %v after its last heartbeat: try again then)",
		m.cfg.Group, strings.Join(m.cfg.Client.Brokers, ","), ErrGroupHeld, holder, m.cfg.Session)
}

// rejoinable reports a group error after which joining again restores the
// membership: a rebalance, or a member or generation the broker no longer
// knows (a broker restarted, a session that expired).
func rejoinable(err error) bool {
	return errors.Is(err, kafka.RebalanceInProgress) || errors.Is(err, kafka.UnknownMemberId) || errors.Is(err, kafka.IllegalGeneration)
}

// join joins the group and syncs, as its leader, until the broker settles
// a generation. A member that is not the leader (another process joined
// first) leaves and fails with ErrGroupHeld.
func (m *Member) join(ctx context.Context) error {
	m.mu.Lock()
	id, incumbent := m.id, m.id != ""
	m.mu.Unlock()
	// A member that held the group joins again owning its topics (the
	// mark of the incumbent), so that a newcomer that joined meanwhile,
	// leader or not, leaves to it.
	var owned map[string][]int
	if incumbent {
		owned = map[string][]int{}
		for _, t := range m.cfg.Topics {
			owned[t] = []int{0}
		}
	}
	for attempt := 0; ; attempt++ {
		if attempt >= 20 {
			return fmt.Errorf("joining consumer group %s: the broker keeps rebalancing it", m.cfg.Group)
		}
		var jr *kafka.JoinGroupResponse
		err := m.cfg.Client.retry(ctx, m.log, "joining group "+m.cfg.Group, func() (err error) {
			jr, err = m.client.JoinGroup(ctx, &kafka.JoinGroupRequest{
				GroupID: m.cfg.Group, SessionTimeout: m.cfg.Session, RebalanceTimeout: m.cfg.Session, MemberID: id,
				ProtocolType: "consumer",
				Protocols:    []kafka.GroupProtocol{{Name: memberProtocol, Metadata: kafka.GroupProtocolSubscription{Topics: m.cfg.Topics, UserData: []byte(m.cfg.Holder), OwnedPartitions: owned}}},
			})
			return err
		})
		if err == nil {
			err = jr.Error
		}
		switch {
		case errors.Is(err, kafka.MemberIDRequired):
			id = jr.MemberID
			continue
		case errors.Is(err, kafka.UnknownMemberId) || errors.Is(err, kafka.RebalanceInProgress):
			id = ""
			continue
		case err != nil:
			return fmt.Errorf("joining consumer group %s: %w", m.cfg.Group, err)
		}
		id = jr.MemberID
		if !incumbent {
			for _, mm := range jr.Members { // the leader's view: an incumbent came back
				if mm.ID != id && len(mm.Metadata.OwnedPartitions) > 0 {
					m.leave(ctx, id)
					return m.heldBy(kafka.DescribeGroupsResponseMember{MemberID: mm.ID, MemberMetadata: kafka.DescribeGroupsResponseMemberMetadata{UserData: mm.Metadata.UserData}})
				}
			}
		}
		if jr.LeaderID != jr.MemberID && !incumbent {
			err := m.held(ctx, id)
			m.leave(ctx, id)
			if err == nil {
				err = fmt.Errorf("consumer group %s on %s is %w, its leader %s: one trainer a run; wait for it to end, or give another --run", m.cfg.Group, strings.Join(m.cfg.Client.Brokers, ","), ErrGroupHeld, jr.LeaderID)
			}
			return err
		}
		// No partitions are assigned: the trainer reads them all itself.
		// An incumbent that is not the leader syncs as a follower: the
		// newcomer leading leaves, and the incumbent joins again.
		var assign []kafka.SyncGroupRequestAssignment
		if jr.LeaderID == id {
			assign = []kafka.SyncGroupRequestAssignment{{MemberID: id, Assignment: kafka.GroupProtocolAssignment{AssignedPartitions: map[string][]int{}}}}
		}
		// A sync that fails (a member left meanwhile, a broker restarting)
		// is answered by joining again.
		sr, err := m.client.SyncGroup(ctx, &kafka.SyncGroupRequest{
			GroupID: m.cfg.Group, GenerationID: jr.GenerationID, MemberID: id,
			ProtocolType: "consumer", ProtocolName: memberProtocol, Assignments: assign,
		})
		if err == nil {
			err = sr.Error
		}
		if rejoinable(err) || (err != nil && retriable(err) && ctx.Err() == nil) {
			m.log.Info("syncing the run's consumer group failed; joining again", "group", m.cfg.Group, "err", err)
			time.Sleep(fetchBackoffMax)
			continue
		}
		if err != nil {
			return fmt.Errorf("syncing consumer group %s: %w", m.cfg.Group, err)
		}
		m.mu.Lock()
		m.id, m.generation = id, jr.GenerationID
		m.mu.Unlock()
		return nil
	}
}

// heartbeat keeps the membership until ctx ends: a heartbeat every third
// of the session; a rebalance or a broker that forgot the member (it
// restarted) is answered by joining again; heartbeats failing for longer
// than the client's retry time end the membership with ErrUnreachable.
func (m *Member) heartbeat(ctx context.Context) {
	defer close(m.done)
	t := time.NewTicker(m.cfg.Session / 3)
	defer t.Stop()
	var failing time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		gen, id, err := m.Generation()
		if err != nil {
			return
		}
		resp, err := m.client.Heartbeat(ctx, &kafka.HeartbeatRequest{GroupID: m.cfg.Group, GenerationID: int32(gen), MemberID: id})
		if err == nil {
			err = resp.Error
		}
		if rejoinable(err) {
			err = m.rejoin(ctx, gen, err)
		}
		switch {
		case err == nil:
			failing = time.Time{}
		case ctx.Err() != nil:
			return
		case m.Err() != nil:
			return
		default:
			if failing.IsZero() {
				failing = time.Now()
			}
			if tried := time.Since(failing); tried >= m.cfg.Client.retryFor() {
				m.fail(m.cfg.Client.unreachable("heartbeat of group "+m.cfg.Group, tried, err))
				return
			}
			m.log.Warn("the broker failed a heartbeat, trying again", "group", m.cfg.Group, "err", err)
		}
	}
}

// rejoin joins the group again after cause (a rebalance, a broker that
// restarted), unless another join moved the generation on from gen
// meanwhile. An error that joining again cannot mend (ErrGroupHeld: another
// trainer took the group) ends the membership.
func (m *Member) rejoin(ctx context.Context, gen int, cause error) error {
	m.joinMu.Lock()
	defer m.joinMu.Unlock()
	if now, _, err := m.Generation(); err != nil || now != gen {
		return err
	}
	m.log.Info("joining the run's consumer group again", "group", m.cfg.Group, "cause", cause)
	err := m.join(ctx)
	if err != nil && (errors.Is(err, ErrGroupHeld) || !retriable(err)) {
		m.fail(err)
	}
	return err
}

func (m *Member) fail(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.err = fmt.Errorf("the membership of consumer group %s was lost: %w", m.cfg.Group, err)
}

// Generation is the member's generation and id for an OffsetCommit, or
// the error that ended the membership.
func (m *Member) Generation() (generation int, id string, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.generation, m.id, m.err
}

// Err is the error that ended the membership, or nil while it holds.
func (m *Member) Err() error {
	_, _, err := m.Generation()
	return err
}

func (m *Member) leave(ctx context.Context, id string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if _, err := m.client.LeaveGroup(ctx, &kafka.LeaveGroupRequest{GroupID: m.cfg.Group, Members: []kafka.LeaveGroupRequestMember{{ID: id}}}); err != nil {
		m.log.Warn("leaving the consumer group", "group", m.cfg.Group, "err", err)
	}
}

// Close stops the heartbeats and leaves the group, so that the next
// trainer of the run may start at once.
func (m *Member) Close() error {
	if m == nil || m.stop == nil {
		return nil
	}
	m.stop()
	<-m.done
	m.mu.Lock()
	id := m.id
	m.mu.Unlock()
	m.leave(context.Background(), id)
	m.stop = nil
	return nil
}
