package localcluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// LogSource serves container logs, as a kubelet's log endpoint does for kube-apiserver.
type LogSource func(ctx context.Context, namespace, name string, opts *corev1.PodLogOptions) (io.ReadCloser, error)

// logSources holds the LogSource of the node; the kubelet registers itself after the API server
// has started.
type logSources struct {
	source atomic.Pointer[LogSource]
}

// podLogREST serves pods/log from the registered LogSource.
type podLogREST struct {
	sources *logSources
}

var (
	_ rest.GetterWithOptions = &podLogREST{}
	_ rest.StorageMetadata   = &podLogREST{}
)

func (r *podLogREST) New() runtime.Object { return &corev1.Pod{} }
func (r *podLogREST) Destroy()            {}

func (r *podLogREST) NewGetOptions() (runtime.Object, bool, string) {
	return &corev1.PodLogOptions{}, false, ""
}

func (r *podLogREST) ProducesMIMETypes(string) []string {
	return []string{"text/plain"}
}

func (r *podLogREST) ProducesObject(string) any { return "" }

func (r *podLogREST) Get(ctx context.Context, name string, options runtime.Object) (runtime.Object, error) {
	opts, ok := options.(*corev1.PodLogOptions)
	if !ok {
		return nil, fmt.Errorf("invalid options object: %#v", options)
	}
	namespace, _ := genericrequest.NamespaceFrom(ctx)
	source := r.sources.source.Load()
	if source == nil {
		return nil, apierrors.NewBadRequest("no kubelet serves container logs in this cluster")
	}
	return &logStreamer{ctx: ctx, open: func() (io.ReadCloser, error) { return (*source)(ctx, namespace, name, opts) }}, nil
}

// logStreamer is the streamed body of a pods/log answer.
type logStreamer struct {
	ctx  context.Context
	open func() (io.ReadCloser, error)
}

func (s *logStreamer) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }
func (s *logStreamer) DeepCopyObject() runtime.Object {
	panic("logStreamer is a stream, not an object to copy")
}

func (s *logStreamer) InputStream(context.Context, string, string) (io.ReadCloser, bool, string, error) {
	stream, err := s.open()
	if err != nil {
		return nil, false, "", apierrors.NewBadRequest(err.Error())
	}
	return stream, true, "text/plain", nil
}

// addPodLogOptionsConversion teaches the scheme to read PodLogOptions from a query string, as
// kube-apiserver's generated conversions do.
func addPodLogOptionsConversion(scheme *runtime.Scheme) error {
	return scheme.AddConversionFunc((*url.Values)(nil), (*corev1.PodLogOptions)(nil), func(a, b any, _ conversion.Scope) error {
		values, opts := *(a.(*url.Values)), b.(*corev1.PodLogOptions)
		*opts = corev1.PodLogOptions{Container: values.Get("container")}
		for key, dst := range map[string]*bool{"follow": &opts.Follow, "previous": &opts.Previous, "timestamps": &opts.Timestamps, "insecureSkipTLSVerifyBackend": &opts.InsecureSkipTLSVerifyBackend} {
			if v := values.Get(key); v != "" {
				parsed, err := strconv.ParseBool(v)
				if err != nil {
					return fmt.Errorf("%s=%q: %w", key, v, err)
				}
				*dst = parsed
			}
		}
		for key, dst := range map[string]**int64{"sinceSeconds": &opts.SinceSeconds, "tailLines": &opts.TailLines, "limitBytes": &opts.LimitBytes} {
			if v := values.Get(key); v != "" {
				parsed, err := strconv.ParseInt(v, 10, 64)
				if err != nil {
					return fmt.Errorf("%s=%q: %w", key, v, err)
				}
				*dst = &parsed
			}
		}
		return nil
	})
}

// headerTokenAuthenticator reads "Authorization: Bearer <token>" for a token authenticator. The
// scheme is case-insensitive, as in the API server: the Python Kubernetes client sends "bearer".
type headerTokenAuthenticator struct {
	tokens authenticator.Token
}

func (h headerTokenAuthenticator) AuthenticateRequest(req *http.Request) (*authenticator.Response, bool, error) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(req.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || token == "" {
		return nil, false, nil
	}
	return h.tokens.AuthenticateToken(req.Context(), token)
}
