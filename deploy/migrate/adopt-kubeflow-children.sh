#!/bin/sh
# Run between uninstalling the Kubeflow Spark Operator's chart and installing sparkhooks'
# (docs/migrate-from-kubeflow.md). Metacontroller takes as a parent's children only the objects
# labelled controller-uid=<its uid>, and strips the owner reference from any other object the
# parent controls. This labels what Kubeflow made for each SparkApplication (its driver Pod, UI
# Service and Ingress), each ScheduledSparkApplication (its runs) and each SparkConnect (its
# server Pod, ConfigMap and Service), so that Metacontroller adopts them: sparkhooks then follows
# each driver and server as it runs and counts each run in the schedule's history, and the
# objects go with their parent, as under Kubeflow.
set -eu
kubectl get sparkapplications.sparkoperator.k8s.io --all-namespaces \
  -o jsonpath='{range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{" "}{.metadata.uid}{"\n"}{end}' |
  while read -r ns name uid; do
    kubectl label --namespace "$ns" --overwrite pods,services,ingresses \
      --selector "sparkoperator.k8s.io/app-name=$name,spark-role!=executor" "controller-uid=$uid"
  done
kubectl get scheduledsparkapplications.sparkoperator.k8s.io --all-namespaces \
  -o jsonpath='{range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{" "}{.metadata.uid}{"\n"}{end}' |
  while read -r ns name uid; do
    kubectl label --namespace "$ns" --overwrite sparkapplications.sparkoperator.k8s.io \
      --selector "sparkoperator.k8s.io/scheduled-app-name=$name" "controller-uid=$uid"
  done
kubectl get sparkconnects.sparkoperator.k8s.io --all-namespaces \
  -o jsonpath='{range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{" "}{.metadata.uid}{"\n"}{end}' |
  while read -r ns name uid; do
    kubectl label --namespace "$ns" --overwrite pods,services,configmaps \
      --selector "sparkoperator.k8s.io/connect-name=$name,spark-role!=executor" "controller-uid=$uid"
  done
