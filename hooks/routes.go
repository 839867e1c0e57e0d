package hooks

// Paths served by sparkhooks. The Metacontroller registrations and the Helm chart point at these;
// a test renders the chart and checks that every hook URL names one of them.
const (
	SparkApplicationSyncPath      = "/sparkapplication/sync"
	SparkApplicationFinalizePath  = "/sparkapplication/finalize"
	SparkApplicationCustomizePath = "/sparkapplication/customize"
	ScheduledSyncPath             = "/scheduledsparkapplication/sync"
	SparkConnectSyncPath          = "/sparkconnect/sync"
	SparkConnectFinalizePath      = "/sparkconnect/finalize"
	SparkConnectCustomizePath     = "/sparkconnect/customize"
	SparkClusterSyncPath          = "/sparkcluster/sync"
	SparkClusterFinalizePath      = "/sparkcluster/finalize"
	SparkClusterCustomizePath     = "/sparkcluster/customize"
	// ApacheSparkApplicationSyncPath and the two below serve the Apache operator's
	// SparkApplication (spark.apache.org/v1).
	ApacheSparkApplicationSyncPath      = "/apachesparkapplication/sync"
	ApacheSparkApplicationFinalizePath  = "/apachesparkapplication/finalize"
	ApacheSparkApplicationCustomizePath = "/apachesparkapplication/customize"
	MutatePath                          = "/pods/mutate"
	HealthzPath                         = "/healthz"
	ReadyzPath                          = "/readyz"
	MetricsPath                         = "/metrics"
)

// Routes lists the paths the plain HTTP listener registers.
func Routes() []string {
	return append(validatePaths(),
		SparkApplicationSyncPath,
		SparkApplicationFinalizePath,
		SparkApplicationCustomizePath,
		ScheduledSyncPath,
		SparkConnectSyncPath,
		SparkConnectFinalizePath,
		SparkConnectCustomizePath,
		SparkClusterSyncPath,
		SparkClusterFinalizePath,
		SparkClusterCustomizePath,
		ApacheSparkApplicationSyncPath,
		ApacheSparkApplicationFinalizePath,
		ApacheSparkApplicationCustomizePath,
		MutatePath,
		HealthzPath,
		ReadyzPath,
		MetricsPath,
	)
}

// WebhookRoutes lists the paths the TLS listener registers: the admission webhooks and the probes.
func WebhookRoutes() []string {
	return append(validatePaths(), MutatePath, HealthzPath, ReadyzPath)
}
