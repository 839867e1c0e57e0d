// Package children builds, without spark-submit and without a JVM, every child of one attempt of
// a SparkApplication: what spark-submit --deploy-mode cluster would create (the driver Pod, the
// ConfigMap with spark.properties and the executor pod template, the headless driver Service),
// the optional UI Service, UI Ingress, per-port Services and Ingresses, Gateway API routes
// (gateway.go) and Prometheus ConfigMap, and what an operator adds around them: scheduler
// PodGroups, the driver's PodDisruptionBudget and NetworkPolicy, the Kueue Workload's PodSets.
//
// The shape follows Spark's KubernetesDriverBuilder: an ordered list of small steps, named after
// Spark's feature steps, each adding Spark properties and changing the driver Pod. The Spark
// properties are the ones the Kubeflow Spark Operator passes to spark-submit for the same spec,
// in its order and with its precedence (typed fields win over spec.sparkConf), plus the ones
// spark-submit itself writes. Pod customizations (volumes, affinity, sidecars...) are merged with
// the same rules as the pod-mutation webhook, through mutate.ApplyCustomization.
//
// Everything is a pure function of (SparkApplication, Submission, Options): no clock, no
// randomness, no map iterated unsorted, so the same input always yields byte-identical objects.
// That is what lets the sync hook rebuild the desired children on every call.
//
// Deliberate differences from spark-submit and the Kubeflow operator:
//   - Names are deterministic: the Spark application id is derived from the parent's uid and the
//     attempt, the ConfigMap is named by its content, the driver Service by the application name
//     and the attempt's id (hash-shortened past 63 characters) rather than by a random prefix.
//   - spark.properties and the executor pod template live in one immutable ConfigMap; there is
//     no driver pod template file, because the driver Pod is built here directly.
//   - spark.kubernetes.executor.podNamePrefix is set, to the application name and the attempt's
//     id, so executor Pods are recognisable and never clash with a previous attempt's.
//   - Spark < 3.0 has no executor pod templates: there the executor customizations travel as
//     the pod-customization annotation, which the webhook applies.
package children
