// Package v1 holds the spark.apache.org/v1 API of the Apache Spark Kubernetes Operator that
// sparkhooks serves: SparkCluster, a standalone Spark cluster (a master, a pool of workers),
// field for field and JSON name for JSON name, so that its YAML works unchanged. The embedded
// Kubernetes templates (StatefulSet, Service and autoscaler specs) are kept without a schema:
// Apache's CRD requires none of their fields, which an expanded schema would.
//
// +kubebuilder:object:generate=true
// +groupName=spark.apache.org
package v1
