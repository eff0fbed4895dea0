package stream

import (
	"encoding/binary"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BrokerStats is what a broker served since it started: what `parastream
// broker` prints when it stops.
type BrokerStats struct {
	Uptime           time.Duration
	Connections      int64    // client connections accepted
	Topics           []string // topics produced to, sorted
	MessagesProduced int64    // records in produce requests
	BytesProduced    int64    // their record batches' bytes
	FetchRequests    int64
	BytesIn          int64 // bytes read from clients (after TLS)
	BytesOut         int64 // bytes written to clients: fetched messages and every other response
}

// String is one line: "served 2 connections for 1m3s: topics pairs;
// produced 1000 messages (1.2 MiB); 40 fetch requests; 2.5 MiB sent,
// 1.3 MiB received".
func (s BrokerStats) String() string {
	topics := "no topics produced to"
	if len(s.Topics) > 0 {
		topics = "topics " + strings.Join(s.Topics, ", ")
	}
	return fmt.Sprintf("served %d connections for %s: %s; produced %d messages (%s); %d fetch requests; %s sent, %s received",
		s.Connections, s.Uptime.Round(time.Second), topics, s.MessagesProduced, mib(s.BytesProduced), s.FetchRequests, mib(s.BytesOut), mib(s.BytesIn))
}

func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}

// brokerCounter counts what a broker serves: connections and bytes at its
// listener, produce and fetch requests by observing kfake's requests.
type brokerCounter struct {
	start                                   time.Time
	conns, msgs, produced, fetches, in, out atomic.Int64
	mu                                      sync.Mutex
	topics                                  map[string]bool
}

func newBrokerCounter() *brokerCounter {
	return &brokerCounter{start: time.Now(), topics: map[string]bool{}}
}

// observe counts c's produce and fetch requests, leaving them to c.
func (k *brokerCounter) observe(c *kfake.Cluster) {
	c.Control(func(req kmsg.Request) (kmsg.Response, error, bool) {
		switch r := req.(type) {
		case *kmsg.ProduceRequest:
			for _, t := range r.Topics {
				k.mu.Lock()
				k.topics[t.Topic] = true
				k.mu.Unlock()
				for _, p := range t.Partitions {
					k.produced.Add(int64(len(p.Records)))
					k.msgs.Add(countRecords(p.Records))
				}
			}
		case *kmsg.FetchRequest:
			k.fetches.Add(1)
		}
		return nil, nil, false // handled by the cluster
	})
}

// countRecords is the number of records in a run of record batches (v2,
// magic 2): each batch's length at bytes 8-12, its count at 57-61.
func countRecords(b []byte) int64 {
	var n int64
	for len(b) >= 61 {
		l := int(int32(binary.BigEndian.Uint32(b[8:12]))) + 12
		n += int64(int32(binary.BigEndian.Uint32(b[57:61])))
		if l <= 12 || l > len(b) {
			break
		}
		b = b[l:]
	}
	return n
}

func (k *brokerCounter) stats() BrokerStats {
	k.mu.Lock()
	topics := make([]string, 0, len(k.topics))
	for t := range k.topics {
		topics = append(topics, t)
	}
	k.mu.Unlock()
	sort.Strings(topics)
	return BrokerStats{Uptime: time.Since(k.start), Connections: k.conns.Load(), Topics: topics, MessagesProduced: k.msgs.Load(),
		BytesProduced: k.produced.Load(), FetchRequests: k.fetches.Load(), BytesIn: k.in.Load(), BytesOut: k.out.Load()}
}

// countingListener counts the connections it accepts and their bytes.
type countingListener struct {
	net.Listener
	k *brokerCounter
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return c, err
	}
	l.k.conns.Add(1)
	return countingConn{Conn: c, k: l.k}, nil
}

type countingConn struct {
	net.Conn
	k *brokerCounter
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.k.in.Add(int64(n))
	return n, err
}

func (c countingConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	c.k.out.Add(int64(n))
	return n, err
}
