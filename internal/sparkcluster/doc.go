// Package sparkcluster decides the children and status of a SparkCluster, the Apache Spark
// Kubernetes Operator's standalone Spark cluster, as a pure function of Metacontroller's request
// and the clock.
//
// The children are Apache's: the master and worker StatefulSets, their headless Services, the
// workers' NetworkPolicy, an autoscaler when minWorkers < maxWorkers and a PodDisruptionBudget
// when minWorkers >= 1, merged from the user's templates as Apache documents. What sparkhooks
// does differently: the cluster's name is in every selector (two clusters in a namespace do not
// share Pods), the daemons run in the foreground with readiness and liveness probes on their UI
// ports and a normal grace period, every spec edit reaches the children on the next sync (they
// are built from the spec each time, byte-stable), and the state follows what is observed:
// RunningHealthy only while the master and at least minWorkers workers are ready.
//
// A 200 answer never leaves out an observed StatefulSet unless the cluster is being deleted.
package sparkcluster
