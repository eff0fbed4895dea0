package stream

import (
	"log/slog"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// unknownTopics logs the topics producers ask the broker to create that it
// does not have: a producer (kcat -P, a Kafka client's first send) asks for
// its topic's metadata, to be created, until it times out, and without
// this the broker says nothing. Once a minute a topic at most.
type unknownTopics struct {
	cluster *kfake.Cluster
	logger  *slog.Logger
	mu      sync.Mutex
	logged  map[string]time.Time
}

// watchUnknownTopics installs the logging on c's metadata requests; the
// requests are then handled as usual.
func watchUnknownTopics(c *kfake.Cluster, logger *slog.Logger) {
	u := &unknownTopics{cluster: c, logger: logger, logged: map[string]time.Time{}}
	c.ControlKey(kmsg.Metadata.Int16(), func(req kmsg.Request) (kmsg.Response, error, bool) {
		// A producer asks for its topic to be created; a client that only
		// looks (parastream's own checks) does not, and is not logged.
		m, ok := req.(*kmsg.MetadataRequest)
		if !ok || !m.AllowAutoTopicCreation {
			return nil, nil, false
		}
		var names []string
		for _, t := range m.Topics {
			if t.Topic != nil {
				names = append(names, *t.Topic)
			}
		}
		if len(names) > 0 {
			// Off the cluster's loop, which TopicInfo needs.
			go u.check(names)
		}
		return nil, nil, false // handled by the cluster
	})
}

// check logs each of names the cluster has no topic of.
func (u *unknownTopics) check(names []string) {
	for _, n := range names {
		if u.cluster.TopicInfo(n) != nil {
			continue
		}
		u.mu.Lock()
		last, seen := u.logged[n]
		due := !seen || time.Since(last) > time.Minute
		if due {
			u.logged[n] = time.Now()
		}
		u.mu.Unlock()
		if due {
			u.logger.Warn("refused to create a topic a producer asked for: create it first (parastream publish, kafka-topics.sh --create), or start the broker with --auto-create-topics", "topic", n)
		}
	}
}
