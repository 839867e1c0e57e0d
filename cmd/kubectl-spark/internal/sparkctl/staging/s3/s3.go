// Package s3 stages sparkctl's local dependencies to S3 and S3-compatible stores with the AWS
// SDK for Go v2 and its standard configuration from the environment.
package s3

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
)

// defaultS3Region is used when the environment names none: S3-compatible stores accept any
// region, and AWS answers a wrong one with an error that names the right one.
const defaultS3Region = "us-east-1"

// Stager stages to S3 or, with AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) set, to an S3-compatible
// store, addressed path-style (bucket in the path), which those stores serve without DNS for
// each bucket.
type Stager struct {
	once   sync.Once
	client *awss3.Client
	err    error
}

func (s *Stager) load(ctx context.Context) (*awss3.Client, error) {
	s.once.Do(func() {
		cfg, err := config.LoadDefaultConfig(ctx)
		if err != nil {
			s.err = fmt.Errorf("loading the AWS configuration: %w", err)
			return
		}
		if cfg.Region == "" {
			cfg.Region = defaultS3Region
		}
		s.client = awss3.NewFromConfig(cfg, func(o *awss3.Options) {
			if o.BaseEndpoint != nil {
				o.UsePathStyle = true
			}
		})
	})
	return s.client, s.err
}

// Upload puts the file at bucket/key; without override an existing object is kept.
func (s *Stager) Upload(ctx context.Context, bucket, key, localPath string, override bool) (bool, error) {
	client, err := s.load(ctx)
	if err != nil {
		return false, err
	}
	if !override {
		_, err := client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
		if err == nil {
			return false, nil
		}
		if !notFound(err) {
			return false, err
		}
	}
	f, err := os.Open(localPath)
	if err != nil {
		return false, err
	}
	defer f.Close()
	if _, err := client.PutObject(ctx, &awss3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: f}); err != nil {
		return false, err
	}
	return true, nil
}

// URI is the s3a:// URI Spark's S3 connector (hadoop-aws) reads.
func (*Stager) URI(bucket, key string) string { return "s3a://" + bucket + "/" + key }

func notFound(err error) bool {
	var nf *types.NotFound
	var nsk *types.NoSuchKey
	if errors.As(err, &nf) || errors.As(err, &nsk) {
		return true
	}
	// HEAD answers carry no body, so some stores' 404s reach the SDK without an error code.
	var api smithy.APIError
	return errors.As(err, &api) && (api.ErrorCode() == "NotFound" || api.ErrorCode() == "NoSuchKey")
}
