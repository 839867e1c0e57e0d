//go:build e2e

package sparkctl

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sparkhooks/sparkhooks/sandbox/e2e/harness"
)

func s3Object(t *testing.T, client *awss3.Client, bucket, key string) string {
	t.Helper()
	out, err := client.GetObject(context.Background(), &awss3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		t.Fatalf("s3://%s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	data, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// gcsServer starts fake-gcs-server on ip with one bucket and returns its host:port, the
// address it also names in the links and upload sessions it hands out.
func gcsServer(t *testing.T, ip, bucket string) string {
	t.Helper()
	binary := harness.Fixture(t, "FAKE_GCS_SERVER_BIN")
	data := t.TempDir()
	if err := os.Mkdir(filepath.Join(data, bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	port := harness.FreePort(t)
	host := net.JoinHostPort(ip, fmt.Sprint(port))
	harness.StartServer(t, "fake-gcs-server", "http://"+host+"/storage/v1/b", nil, binary,
		"-scheme", "http", "-host", ip, "-port", fmt.Sprint(port), "-public-host", host, "-external-url", "http://"+host,
		"-backend", "memory", "-data", data, "-log-level", "warn")
	return host
}

func gcsObject(t *testing.T, host, bucket, key string) (string, int) {
	t.Helper()
	resp, err := http.Get(fmt.Sprintf("http://%s/storage/v1/b/%s/o/%s?alt=media", host, bucket, strings.ReplaceAll(key, "/", "%2F")))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	return string(data), resp.StatusCode
}
