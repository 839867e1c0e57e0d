package localcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	noopoteltrace "go.opentelemetry.io/otel/trace/noop"
	corev1 "k8s.io/api/core/v1"
	apiextensionsapiserver "k8s.io/apiextensions-apiserver/pkg/apiserver"
	crdoptions "k8s.io/apiextensions-apiserver/pkg/cmd/server/options"
	generatedopenapi "k8s.io/apiextensions-apiserver/pkg/generated/openapi"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/apiserver/pkg/util/webhook"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	restclient "k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/kube-openapi/pkg/common"
	openapiutil "k8s.io/kube-openapi/pkg/util"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// APIServer is a real Kubernetes API server running in the test process: apiextensions-apiserver
// serving CustomResourceDefinitions and custom resources (schema validation, defaulting, pruning,
// status subresource, CEL rules), with core/v1 and networking/v1 installed on the same server.
// Only the loopback token is accepted; it has every right.
type APIServer struct {
	// Config is the privileged loopback client configuration.
	Config *restclient.Config
	// Kubeconfig is the path of a kubeconfig file for kubectl with the same credentials.
	Kubeconfig string
	// Address is the host:port the server listens on.
	Address string
	// ServingCA is the certificate bundle that verifies the server's serving certificate, for
	// names kubernetes.default.svc and the like, as pods see it in ca.crt.
	ServingCA []byte

	logs *logSources

	cancel context.CancelFunc
	done   chan error
}

// StartAPIServer starts an API server on a free loopback port, storing in the etcd at etcdURL
// and keeping its certificates and kubeconfig in dir. It returns once the server is ready.
// addr is where it listens (a free loopback port when empty); servingIPs are addresses its certificate is valid for besides loopback: the address pods
// reach it at, which in-cluster clients that connect by KUBERNETES_SERVICE_HOST verify.
func StartAPIServer(ctx context.Context, dir, etcdURL, addr string, servingIPs ...net.IP) (*APIServer, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	listener, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("the API server cannot listen on %s: %w", addr, err)
	}
	logs := &logSources{}
	server, err := newAPIServer(listener, dir, etcdURL, logs, servingIPs)
	if err != nil {
		listener.Close()
		return nil, err
	}
	servingCA, err := os.ReadFile(filepath.Join(dir, "apiserver.crt"))
	if err != nil {
		listener.Close()
		return nil, fmt.Errorf("reading the serving certificate: %w", err)
	}
	// ctx bounds the start-up only; the server runs until Stop.
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &APIServer{
		Config: server.GenericAPIServer.LoopbackClientConfig, Address: listener.Addr().String(), ServingCA: servingCA,
		logs: logs, cancel: cancel, done: make(chan error, 1),
	}
	prepared := server.GenericAPIServer.PrepareRun()
	go func() { s.done <- prepared.RunWithContext(runCtx) }()

	if err := s.waitReady(ctx); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.ensureNamespace(ctx, metav1.NamespaceDefault); err != nil {
		s.Stop()
		return nil, err
	}
	s.Kubeconfig = filepath.Join(dir, "kubeconfig")
	if err := writeKubeconfig(s.Config, s.Kubeconfig); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// Stop shuts the server down and waits for it to finish.
func (s *APIServer) Stop() {
	s.cancel()
	select {
	case <-s.done:
	case <-time.After(30 * time.Second):
	}
}

// SetLogSource makes pods/log answer from source, as kube-apiserver asks a node's kubelet.
func (s *APIServer) SetLogSource(source LogSource) {
	s.logs.source.Store(&source)
}

// ClientConfig returns a copy of the loopback configuration without client-side rate limits, for
// the controllers and tests of the harness.
func (s *APIServer) ClientConfig() *restclient.Config {
	cfg := restclient.CopyConfig(s.Config)
	cfg.QPS = -1
	cfg.Burst = 0
	cfg.RateLimiter = nil
	return cfg
}

func newAPIServer(listener net.Listener, dir, etcdURL string, logs *logSources, servingIPs []net.IP) (*apiextensionsapiserver.CustomResourceDefinitions, error) {
	opts := crdoptions.NewCustomResourceDefinitionsServerOptions(io.Discard, io.Discard)
	recommended := opts.RecommendedOptions

	// A registry of its own keeps the feature gates and version of this server apart from any
	// other server in the process.
	featureGate := utilfeature.DefaultMutableFeatureGate.DeepCopy()
	effectiveVersion := compatibility.DefaultKubeEffectiveVersionForTest()
	effectiveVersion.SetEmulationVersion(featureGate.EmulationVersion())
	registry := basecompatibility.NewComponentGlobalsRegistry()
	if err := registry.Register(basecompatibility.DefaultKubeComponent, effectiveVersion, featureGate); err != nil {
		return nil, err
	}
	if err := registry.Set(); err != nil {
		return nil, err
	}
	opts.ServerRunOptions.ComponentGlobalsRegistry = registry
	if err := opts.ServerRunOptions.Complete(); err != nil {
		return nil, err
	}

	recommended.SecureServing.Listener = listener
	recommended.SecureServing.BindPort = listener.Addr().(*net.TCPAddr).Port
	recommended.SecureServing.BindAddress = net.IPv4(127, 0, 0, 1)
	recommended.SecureServing.ServerCert.CertDirectory = dir
	// Pods reach the server as kubernetes.default.svc, as in a real cluster.
	inCluster := []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
	if err := recommended.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", inCluster, append([]net.IP{net.IPv4(127, 0, 0, 1)}, servingIPs...)); err != nil {
		return nil, fmt.Errorf("creating serving certificates: %w", err)
	}
	recommended.Etcd.StorageConfig.Transport.ServerList = []string{etcdURL}
	// Only the namespace lifecycle plugin: the webhook and policy plugins wait for
	// admissionregistration informers of an API this server does not serve.
	recommended.Admission.DisablePlugins = disabledAdmissionPlugins(recommended.Admission)

	config := genericapiserver.NewRecommendedConfig(apiextensionsapiserver.Codecs)
	if err := opts.ServerRunOptions.ApplyTo(&config.Config); err != nil {
		return nil, err
	}
	if err := recommended.Etcd.ApplyTo(&config.Config); err != nil {
		return nil, fmt.Errorf("etcd options: %w", err)
	}
	// Streams that last as long as the user wants them (kubectl logs -f, port-forward) are
	// long-running requests, as kube-apiserver counts them: the request timeout (60 s) would
	// cut them.
	config.LongRunningFunc = genericfilters.BasicLongRunningRequestCheck(
		sets.NewString("watch", "proxy"), sets.NewString("attach", "exec", "proxy", "log", "portforward"))
	if err := recommended.SecureServing.ApplyToConfig(&config.Config); err != nil {
		return nil, fmt.Errorf("serving options: %w", err)
	}
	// /version as a release build reports it: a client that parses the server version (Kueue's
	// controller does) refuses the source tree's "v0.0.0-master+$Format:%H$".
	config.EffectiveVersion = releaseVersion{config.EffectiveVersion}
	// Only the loopback token, which Complete adds to this authenticator (in group
	// system:masters): the simulated kubelet runs nothing that calls the API.
	config.Authentication.Authenticator = headerTokenAuthenticator{tokens: authenticator.TokenFunc(
		func(context.Context, string) (*authenticator.Response, bool, error) { return nil, false, nil })}
	config.Authorization.Authorizer = authorizerfactory.NewPrivilegedGroups(user.SystemPrivilegedGroup)

	client, err := kubernetes.NewForConfig(config.LoopbackClientConfig)
	if err != nil {
		return nil, err
	}
	dynamicClient, err := dynamic.NewForConfig(config.LoopbackClientConfig)
	if err != nil {
		return nil, err
	}
	config.ClientConfig = config.LoopbackClientConfig
	config.SharedInformerFactory = informers.NewSharedInformerFactory(client, 0)
	if err := recommended.Admission.ApplyTo(&config.Config, config.SharedInformerFactory, client, dynamicClient, featureGate, effectiveVersion); err != nil {
		return nil, fmt.Errorf("admission options: %w", err)
	}
	if err := opts.APIEnablement.ApplyTo(&config.Config, apiextensionsapiserver.DefaultAPIResourceConfigSource(), apiextensionsapiserver.Scheme); err != nil {
		return nil, err
	}

	builtinScheme, builtinCodecs, err := newBuiltinScheme()
	if err != nil {
		return nil, fmt.Errorf("built-in scheme: %w", err)
	}
	definitions := withShallowBuiltinDefinitions(generatedopenapi.GetOpenAPIDefinitions)
	namer := openapinamer.NewDefinitionNamer(apiextensionsapiserver.Scheme, builtinScheme)
	config.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(definitions, namer)
	// apiextensions-apiserver publishes the CRDs' schemas (in /openapi/v2 and /openapi/v3) only
	// when both documents are served, as kube-apiserver does. kubectl reads them to decide
	// whether the server validates fields, for explain and for apply, so without them kubectl
	// would behave as against no real cluster.
	config.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(definitions, namer)

	crdConfig := &apiextensionsapiserver.Config{
		GenericConfig: config,
		ExtraConfig: apiextensionsapiserver.ExtraConfig{
			CRDRESTOptionsGetter: crdoptions.NewCRDRESTOptionsGetter(*recommended.Etcd, config.ResourceTransformers, config.StorageObjectCountTracker),
			ServiceResolver:      noServiceResolver{},
			AuthResolverWrapper:  webhook.NewDefaultAuthenticationInfoResolverWrapper(nil, nil, config.LoopbackClientConfig, noopoteltrace.NewTracerProvider()),
		},
	}
	completed := crdConfig.Complete()
	// apiextensions-apiserver turns discovery off because kube-apiserver's aggregator serves it;
	// standing alone, the server must serve /apis itself or kubectl finds no groups.
	completed.GenericConfig.EnableDiscovery = true
	server, err := completed.New(genericapiserver.NewEmptyDelegate())
	if err != nil {
		return nil, fmt.Errorf("creating the API server: %w", err)
	}
	if err := installBuiltinGroups(server.GenericAPIServer, recommended.Etcd, config, builtinScheme, builtinCodecs, logs); err != nil {
		return nil, err
	}
	return server, nil
}

// installBuiltinGroups serves the built-in kinds (core/v1 at /api, the other groups at /apis)
// from generic registry stores in the same etcd.
func installBuiltinGroups(server *genericapiserver.GenericAPIServer, etcd *genericoptions.EtcdOptions, config *genericapiserver.RecommendedConfig,
	scheme *runtime.Scheme, codecs serializer.CodecFactory, logs *logSources,
) error {
	storageConfig := etcd.StorageConfig
	storageConfig.Codec = codecs.LegacyCodec(builtinGroupVersions...)
	storageConfig.StorageObjectCountTracker = config.StorageObjectCountTracker
	optsGetter := etcd.CreateRESTOptionsGetter(&genericoptions.SimpleStorageFactory{StorageConfig: storageConfig}, config.ResourceTransformers)

	groups := map[string]*genericapiserver.APIGroupInfo{}
	for _, gv := range builtinGroupVersions {
		info := genericapiserver.NewDefaultAPIGroupInfo(gv.Group, scheme, runtime.NewParameterCodec(scheme), codecs)
		info.VersionedResourcesStorageMap[gv.Version] = map[string]rest.Storage{}
		groups[gv.Group] = &info
	}
	for _, kind := range builtinKinds() {
		storage, err := newBuiltinStorage(kind, scheme, optsGetter)
		if err != nil {
			return err
		}
		for path, s := range storage {
			groups[kind.gvr.Group].VersionedResourcesStorageMap[kind.gvr.Version][path] = s
		}
	}
	groups[corev1.GroupName].VersionedResourcesStorageMap["v1"]["pods/log"] = &podLogREST{sources: logs}
	for _, gv := range builtinGroupVersions {
		install := server.InstallAPIGroup
		if gv.Group == corev1.GroupName {
			install = func(info *genericapiserver.APIGroupInfo) error {
				return server.InstallLegacyAPIGroup(genericapiserver.DefaultLegacyAPIPrefix, info)
			}
		}
		if err := install(groups[gv.Group]); err != nil {
			return fmt.Errorf("installing %s: %w", gv, err)
		}
	}
	return nil
}

// withShallowBuiltinDefinitions adds an OpenAPI model for every built-in type the harness serves.
// The API server needs one per type to track managed fields; a model that keeps unknown fields is
// enough for that, and the real field checks are the harness's validation rules.
func withShallowBuiltinDefinitions(defs common.GetOpenAPIDefinitions) common.GetOpenAPIDefinitions {
	return func(ref common.ReferenceCallback) map[string]common.OpenAPIDefinition {
		out := defs(ref)
		for _, kind := range builtinKinds() {
			for _, obj := range []runtime.Object{kind.newObj(), kind.newList()} {
				out[openapiutil.GetCanonicalTypeName(obj)] = common.OpenAPIDefinition{Schema: spec.Schema{
					SchemaProps:      spec.SchemaProps{Type: []string{"object"}},
					VendorExtensible: spec.VendorExtensible{Extensions: spec.Extensions{"x-kubernetes-preserve-unknown-fields": true}},
				}}
			}
		}
		return out
	}
}

func disabledAdmissionPlugins(admission *genericoptions.AdmissionOptions) []string {
	var disabled []string
	for _, name := range admission.Plugins.Registered() {
		if name != lifecycle.PluginName {
			disabled = append(disabled, name)
		}
	}
	return disabled
}

func (s *APIServer) waitReady(ctx context.Context) error {
	client, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	var last string
	err = wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		select {
		case err := <-s.done:
			return false, fmt.Errorf("API server stopped while starting: %w", err)
		default:
		}
		body, err := client.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
		if err != nil {
			last = fmt.Sprintf("%v: %s", err, body)
			return false, nil
		}
		return true, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the API server's /readyz (last answer: %s): %w", last, err)
	}
	return nil
}

func (s *APIServer) ensureNamespace(ctx context.Context, name string) error {
	client, err := kubernetes.NewForConfig(s.Config)
	if err != nil {
		return err
	}
	_, err = client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}

// writeKubeconfig writes cfg as a kubeconfig file. The loopback certificate is issued for the
// name apiserver-loopback-client, hence tls-server-name.
func writeKubeconfig(cfg *restclient.Config, path string) error {
	kubeconfig := clientcmdapi.NewConfig()
	kubeconfig.Clusters["e2e"] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.TLSClientConfig.CAData,
		TLSServerName:            cfg.TLSClientConfig.ServerName,
	}
	kubeconfig.AuthInfos["e2e"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kubeconfig.Contexts["e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: "e2e", Namespace: metav1.NamespaceDefault}
	kubeconfig.CurrentContext = "e2e"
	if err := clientcmd.WriteToFile(*kubeconfig, path); err != nil {
		return fmt.Errorf("writing kubeconfig: %w", err)
	}
	return nil
}

// noServiceResolver is the conversion-webhook service resolver: the sparkhooks CRDs have a
// single version and no conversion webhook, so nothing may need one.
type noServiceResolver struct{}

func (noServiceResolver) ResolveEndpoint(namespace, name string, port int32) (*url.URL, error) {
	return nil, errors.New("the e2e API server resolves no services")
}

// releaseVersion reports the binary version as the git version, as a release build does.
type releaseVersion struct {
	basecompatibility.EffectiveVersion
}

func (v releaseVersion) Info() *apimachineryversion.Info {
	info := v.EffectiveVersion.Info()
	if bin := v.BinaryVersion(); info != nil && bin != nil {
		info.GitVersion = fmt.Sprintf("v%d.%d.%d", bin.Major(), bin.Minor(), bin.Patch())
	}
	return info
}
