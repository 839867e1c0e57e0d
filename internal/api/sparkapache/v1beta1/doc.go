// Package v1beta1 is the spark.apache.org/v1beta1 SparkApplication the Apache operator 1.0
// still serves: the same fields as v1, stored as v1 (the CRD converts with strategy None), so
// that YAML written for it applies unchanged. The hooks see every object as v1.
//
// +kubebuilder:object:generate=true
// +groupName=spark.apache.org
package v1beta1
