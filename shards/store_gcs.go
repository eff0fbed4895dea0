//go:build dataflow

package shards

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"

	"cloud.google.com/go/storage"
	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/gcs" // gs:// through Beam's filesystems
	"google.golang.org/api/googleapi"
	"google.golang.org/api/iterator"
)

// gcsStore is the manifest's conditional write (generation preconditions)
// and the listing on Google Cloud Storage, with the application default
// credentials, as Beam's gcs filesystem has them.
type gcsStore struct {
	client *storage.Client
}

func newGCSStore(ctx context.Context) (objectStore, error) {
	client, err := storage.NewClient(ctx)
	if err != nil {
		return nil, fmt.Errorf("opening Cloud Storage: %w", err)
	}
	return &gcsStore{client: client}, nil
}

func (s *gcsStore) object(url string) *storage.ObjectHandle {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(url, "gs://"), "/")
	return s.client.Bucket(bucket).Object(key)
}

func (s *gcsStore) get(ctx context.Context, url string) ([]byte, objectInfo, error) {
	obj := s.object(url)
	attrs, err := obj.Attrs(ctx)
	if err != nil {
		return nil, objectInfo{}, gcsError(url, err)
	}
	r, err := obj.Generation(attrs.Generation).NewReader(ctx)
	if err != nil {
		return nil, objectInfo{}, gcsError(url, err)
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, objectInfo{}, fmt.Errorf("reading %s: %w", url, err)
	}
	return data, gcsInfo(url, attrs), nil
}

func (s *gcsStore) head(ctx context.Context, url string) (objectInfo, error) {
	attrs, err := s.object(url).Attrs(ctx)
	if err != nil {
		return objectInfo{}, gcsError(url, err)
	}
	return gcsInfo(url, attrs), nil
}

func (s *gcsStore) putIf(ctx context.Context, url string, data []byte, token string) error {
	cond := storage.Conditions{DoesNotExist: true}
	if token != "" {
		gen, err := strconv.ParseInt(token, 10, 64)
		if err != nil {
			return fmt.Errorf("%s: generation %q: %w", url, token, err)
		}
		cond = storage.Conditions{GenerationMatch: gen}
	}
	w := s.object(url).If(cond).NewWriter(ctx)
	w.ContentType = "application/json"
	if _, err := io.Copy(w, bytes.NewReader(data)); err != nil {
		w.Close()
		return gcsError(url, err)
	}
	if err := w.Close(); err != nil {
		return gcsError(url, err)
	}
	return nil
}

func (s *gcsStore) list(ctx context.Context, prefix string) ([]objectInfo, error) {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(prefix, "gs://"), "/")
	it := s.client.Bucket(bucket).Objects(ctx, &storage.Query{Prefix: key})
	var objs []objectInfo
	for {
		attrs, err := it.Next()
		if errors.Is(err, iterator.Done) {
			return objs, nil
		}
		if err != nil {
			return nil, gcsError(prefix, err)
		}
		objs = append(objs, gcsInfo("gs://"+bucket+"/"+attrs.Name, attrs))
	}
}

// gcsInfo is an object's generation and the time it was written (a new
// generation is a new object: Created is when it was written).
func gcsInfo(url string, attrs *storage.ObjectAttrs) objectInfo {
	return objectInfo{URL: url, Token: strconv.FormatInt(attrs.Generation, 10), Modified: attrs.Created}
}

// gcsError maps a missing object to os.ErrNotExist and a failed
// precondition (412) to ErrConflict.
func gcsError(url string, err error) error {
	if errors.Is(err, storage.ErrObjectNotExist) {
		return fmt.Errorf("%s: %w", url, os.ErrNotExist)
	}
	var ge *googleapi.Error
	if errors.As(err, &ge) && ge.Code == http.StatusPreconditionFailed {
		return fmt.Errorf("%w: %s changed since this run read it", ErrConflict, url)
	}
	return fmt.Errorf("%s: %w", url, err)
}
