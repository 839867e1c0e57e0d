//go:build e2e

package sparkctl

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
)

// fixture returns the file the environment variable name points to: what `make test-fixtures`
// (hack/test-fixtures/build.sh, pinned) builds or fetches and `make e2e` exports. MinIO is the
// S3-compatible server most S3 users run outside AWS; fake-gcs-server is the GCS emulator
// cloud.google.com/go/storage's own docs point to, speaking the JSON API and the upload
// protocols the SDK uses.
func fixture(t *testing.T, name string) string {
	t.Helper()
	path := os.Getenv(name)
	if path == "" {
		t.Fatalf("%s is not set: make test-fixtures prepares it, make e2e exports it", name)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%s: %v (make test-fixtures)", name, err)
	}
	return path
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startServer runs a store until the test ends and waits until url answers 200.
func startServer(t *testing.T, name, url string, env []string, binary string, args ...string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	log := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(100 * time.Millisecond) {
		select {
		case err := <-exited:
			t.Fatalf("%s exited: %v\n%s", name, err, log)
		default:
		}
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s does not answer %s:\n%s", name, url, log)
		}
	}
}

// minio starts a MinIO server with one bucket and returns its endpoint and a client.
func minio(t *testing.T, bucket string) (string, *awss3.Client) {
	t.Helper()
	binary := fixture(t, "MINIO_BIN")
	port, console := freePort(t), freePort(t)
	endpoint := fmt.Sprintf("http://127.0.0.1:%d", port)
	startServer(t, "minio", endpoint+"/minio/health/ready",
		[]string{"MINIO_ROOT_USER=sparkctl", "MINIO_ROOT_PASSWORD=sparkctl-secret", "MINIO_BROWSER=off"},
		binary, "server", t.TempDir(), "--address", fmt.Sprintf("127.0.0.1:%d", port), "--console-address", fmt.Sprintf("127.0.0.1:%d", console), "--quiet")
	client := awss3.New(awss3.Options{
		BaseEndpoint: aws.String(endpoint), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider("sparkctl", "sparkctl-secret", ""),
	})
	if _, err := client.CreateBucket(t.Context(), &awss3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		t.Fatalf("creating bucket %s: %v", bucket, err)
	}
	return endpoint, client
}

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
	binary := fixture(t, "FAKE_GCS_SERVER_BIN")
	data := t.TempDir()
	if err := os.Mkdir(filepath.Join(data, bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	host := net.JoinHostPort(ip, fmt.Sprint(port))
	startServer(t, "fake-gcs-server", "http://"+host+"/storage/v1/b", nil, binary,
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
