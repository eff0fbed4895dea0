package shards

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	_ "github.com/apache/beam/sdks/v2/go/pkg/beam/io/filesystem/s3" // s3:// through Beam's filesystems
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// s3Store is the manifest's conditional write and the listing on S3 and
// S3-compatible stores. Its client is configured as Beam's s3 filesystem
// configures its own (the AWS SDK's defaults: the environment, the shared
// configuration and credentials files, AWS_ENDPOINT_URL_S3 or
// AWS_ENDPOINT_URL for an S3-compatible store), so that both reach the
// same store as the same user.
type s3Store struct {
	client *s3.Client
}

func newS3Store(ctx context.Context) (objectStore, error) {
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("loading the AWS configuration: %w", err)
	}
	return &s3Store{client: s3.NewFromConfig(cfg)}, nil
}

// splitS3 splits s3://bucket/key.
func splitS3(url string) (bucket, key string) {
	bucket, key, _ = strings.Cut(strings.TrimPrefix(url, "s3://"), "/")
	return bucket, key
}

func (s *s3Store) get(ctx context.Context, url string) ([]byte, objectInfo, error) {
	bucket, key := splitS3(url)
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return nil, objectInfo{}, s3Error(url, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, objectInfo{}, fmt.Errorf("reading %s: %w", url, err)
	}
	return data, objectInfo{URL: url, Token: aws.ToString(out.ETag), Modified: aws.ToTime(out.LastModified)}, nil
}

func (s *s3Store) head(ctx context.Context, url string) (objectInfo, error) {
	bucket, key := splitS3(url)
	out, err := s.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return objectInfo{}, s3Error(url, err)
	}
	return objectInfo{URL: url, Token: aws.ToString(out.ETag), Modified: aws.ToTime(out.LastModified)}, nil
}

func (s *s3Store) putIf(ctx context.Context, url string, data []byte, token string) error {
	bucket, key := splitS3(url)
	in := &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: bytes.NewReader(data),
		ContentType: aws.String("application/json")}
	if token == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(token)
	}
	if _, err := s.client.PutObject(ctx, in); err != nil {
		return s3Error(url, err)
	}
	return nil
}

func (s *s3Store) list(ctx context.Context, prefix string) ([]objectInfo, error) {
	bucket, key := splitS3(prefix)
	pages := s3.NewListObjectsV2Paginator(s.client, &s3.ListObjectsV2Input{Bucket: aws.String(bucket), Prefix: aws.String(key)})
	var objs []objectInfo
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, s3Error(prefix, err)
		}
		for _, o := range page.Contents {
			objs = append(objs, objectInfo{URL: "s3://" + bucket + "/" + aws.ToString(o.Key), Token: aws.ToString(o.ETag), Modified: aws.ToTime(o.LastModified)})
		}
	}
	return objs, nil
}

// s3Error maps the store's answers to this package's errors: 404 to
// os.ErrNotExist, a failed precondition (412) or a concurrent conditional
// write (409) to ErrConflict.
func s3Error(url string, err error) error {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		switch re.HTTPStatusCode() {
		case http.StatusNotFound:
			return fmt.Errorf("%s: %w", url, os.ErrNotExist)
		case http.StatusPreconditionFailed, http.StatusConflict:
			return fmt.Errorf("%w: %s changed since this run read it", ErrConflict, url)
		}
	}
	var ae smithy.APIError
	if errors.As(err, &ae) && (ae.ErrorCode() == "NoSuchKey" || ae.ErrorCode() == "NotFound") {
		return fmt.Errorf("%s: %w", url, os.ErrNotExist)
	}
	return fmt.Errorf("%s: %w", url, err)
}
