package testenv

import (
	"io"
	"io/fs"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// S3Server is an S3-compatible server in this process (gofakes3 over
// memory), with conditional writes (If-None-Match, If-Match) as S3 has
// them.
type S3Server struct {
	backend *s3mem.Backend
}

// StartS3 starts an S3-compatible server for the test, with bucket in it,
// and points the AWS SDK's default configuration at it through the
// environment (t.Setenv: the endpoint, static credentials, a region; a
// helper process started by the test inherits them). Its clock starts now
// and advances a second at each reading, so that objects written one
// after the other have modification times in that order, as a real store's
// (whose times have a second's resolution) have when writes are seconds
// apart.
func StartS3(t testing.TB, bucket string) *S3Server {
	t.Helper()
	clock := &tickingClock{now: time.Now().Truncate(time.Second)}
	backend := s3mem.New(s3mem.WithTimeSource(clock))
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(gofakes3.New(backend, gofakes3.WithTimeSource(clock), gofakes3.WithTimeSkewLimit(0)).Server())
	t.Cleanup(srv.Close)
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL": srv.URL, "AWS_REGION": "us-east-1",
		"AWS_ACCESS_KEY_ID": "parastream", "AWS_SECRET_ACCESS_KEY": "parastream",
		"AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null",
		"AWS_EC2_METADATA_DISABLED": "true", "AWS_PROFILE": "",
	} {
		t.Setenv(k, v)
	}
	return &S3Server{backend: backend}
}

// Objects reads every object of the bucket under prefix (s3://bucket/prefix
// or bucket/prefix), by key relative to the prefix.
func (s *S3Server) Objects(t testing.TB, prefix string) map[string]string {
	t.Helper()
	bucket, key, _ := strings.Cut(strings.TrimPrefix(prefix, "s3://"), "/")
	if key != "" && !strings.HasSuffix(key, "/") {
		key += "/"
	}
	list, err := s.backend.ListBucket(bucket, &gofakes3.Prefix{Prefix: key, HasPrefix: true}, gofakes3.ListBucketPage{})
	if err != nil {
		t.Fatal(err)
	}
	objs := map[string]string{}
	for _, c := range list.Contents {
		o, err := s.backend.GetObject(bucket, c.Key, nil)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(o.Contents)
		o.Contents.Close()
		if err != nil {
			t.Fatal(err)
		}
		objs[strings.TrimPrefix(c.Key, key)] = string(b)
	}
	return objs
}

// tickingClock is a time source that advances a second at each reading.
type tickingClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *tickingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(time.Second)
	return c.now
}

func (c *tickingClock) Since(t time.Time) time.Duration { return c.Now().Sub(t) }

// NoSchemeDirs fails the test if a file or directory under root is named
// after a URL scheme ("s3:", "gs:", ...): a location that was written as a
// local path.
func NoSchemeDirs(t testing.TB, root string) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(d.Name(), ":") {
			t.Errorf("%s: a location with a scheme was written as a local path", p)
		}
		return nil
	})
}

// Remove removes the object at url (s3://bucket/key), as another client of
// the store would.
func (s *S3Server) Remove(url string) error {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(url, "s3://"), "/")
	_, err := s.backend.DeleteObject(bucket, key)
	return err
}
