#!/bin/sh
# Run after uninstalling sparkhooks' and Metacontroller's charts (docs/migrate-from-kubeflow.md).
# Metacontroller puts a finalizer on every object its CompositeControllers run, and only it takes
# the finalizer off again: with Metacontroller gone, deleting such an object would hang. This
# removes Metacontroller's finalizers (metacontroller.io/...) and leaves every other one.
set -eu
for kind in sparkapplications.sparkoperator.k8s.io scheduledsparkapplications.sparkoperator.k8s.io sparkconnects.sparkoperator.k8s.io; do
  kubectl get "$kind" --all-namespaces \
    -o jsonpath='{range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{range .metadata.finalizers[*]}{" "}{@}{end}{"\n"}{end}' |
    while read -r ns name finalizers; do
      # JSON patch operations from the last index down, so that each index still holds when
      # its turn comes; each removal is guarded by a test of the value it removes.
      i=0 ops=""
      for f in $finalizers; do
        case "$f" in
        metacontroller.io/*)
          ops="{\"op\":\"test\",\"path\":\"/metadata/finalizers/$i\",\"value\":\"$f\"},{\"op\":\"remove\",\"path\":\"/metadata/finalizers/$i\"}${ops:+,$ops}"
          ;;
        esac
        i=$((i + 1))
      done
      [ -z "$ops" ] || kubectl patch "$kind" "$name" --namespace "$ns" --type=json --patch "[$ops]"
    done
done
