//go:build e2e

package harness

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
)

// Fixture returns the file the environment variable name points to: what `make test-fixtures`
// (hack/test-fixtures/build.sh, pinned) builds or fetches and `make e2e` exports. MinIO is the
// S3-compatible server most S3 users run outside AWS; fake-gcs-server is the GCS emulator
// cloud.google.com/go/storage's own docs point to, speaking the JSON API and the upload
// protocols the SDK uses.
func Fixture(t *testing.T, name string) string {
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

// FreePort is a TCP port nothing listens on.
func FreePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// LockedBuffer is a process's output, written by it and read by the test while it runs.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// StartServer runs a store until the test ends and waits until url answers 200.
func StartServer(t *testing.T, name, url string, env []string, binary string, args ...string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	log := &LockedBuffer{}
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

// S3Store is a MinIO server a test started: where it listens, the credentials it accepts, and a
// client with them.
type S3Store struct {
	Endpoint  string // http://IP:PORT
	AccessKey string
	SecretKey string
	Client    *awss3.Client
}

// StartMinIO starts a MinIO server (MINIO_BIN) listening on ip, with the buckets, until the test
// ends. Pods reach a server on the machine at the node's address on the pod network.
func StartMinIO(t *testing.T, ip string, buckets ...string) *S3Store {
	t.Helper()
	binary := Fixture(t, "MINIO_BIN")
	port, console := FreePort(t), FreePort(t)
	s := &S3Store{Endpoint: "http://" + net.JoinHostPort(ip, fmt.Sprint(port)), AccessKey: "e2e-store", SecretKey: "e2e-store-secret"}
	StartServer(t, "minio", s.Endpoint+"/minio/health/ready",
		[]string{"MINIO_ROOT_USER=" + s.AccessKey, "MINIO_ROOT_PASSWORD=" + s.SecretKey, "MINIO_BROWSER=off"},
		binary, "server", t.TempDir(), "--address", net.JoinHostPort(ip, fmt.Sprint(port)), "--console-address", net.JoinHostPort(ip, fmt.Sprint(console)), "--quiet")
	s.Client = awss3.New(awss3.Options{
		BaseEndpoint: aws.String(s.Endpoint), Region: "us-east-1", UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s.AccessKey, s.SecretKey, ""),
	})
	for _, bucket := range buckets {
		if _, err := s.Client.CreateBucket(t.Context(), &awss3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
			t.Fatalf("creating bucket %s: %v", bucket, err)
		}
	}
	return s
}
