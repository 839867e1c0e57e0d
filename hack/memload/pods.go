package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// The application the base request describes (testdata/sync/running-with-executors): the
// executors must carry its selector and submission labels to be counted as its own.
const (
	appName       = "spark-pi"
	appNamespace  = "spark-jobs"
	appSelector   = "spark-435733a6ffd4917c0714aa02ff719101"
	submissionID  = "88564df2-8d14-5451-be58-3481e22b85d9"
	podNamePrefix = "spark-pi-435733a6"
	driverPodName = "spark-pi-driver"
	driverPodUID  = "child-2"
	sparkImage    = "apache/spark:3.5.3"
	localDir      = "/var/data/spark-6f1b7a7e-3f55-4c1c-9d6e-0c6d5b0e4a17"
)

// syncRequest reads the base sync request and replaces its related executors with as many
// realistic executor Pods as it takes for the body to reach size bytes. The spec is left as it
// is (an edit would restart the application): dynamic allocation can run more executors than
// spec.executor.instances.
func syncRequest(basePath string, size int) ([]byte, int, error) {
	raw, err := os.ReadFile(basePath)
	if err != nil {
		return nil, 0, fmt.Errorf("read base request: %w", err)
	}
	var req map[string]any
	if err := json.Unmarshal(raw, &req); err != nil {
		return nil, 0, fmt.Errorf("decode base request %s: %w", basePath, err)
	}
	one, err := json.Marshal(executorPod(1))
	if err != nil {
		return nil, 0, fmt.Errorf("encode executor pod: %w", err)
	}
	n := max(1, (size-len(raw))/len(one))
	pods := make(map[string]*corev1.Pod, n)
	for id := 1; id <= n; id++ {
		p := executorPod(id)
		pods[p.Name] = p
	}
	req["related"] = map[string]any{"Pod.v1": pods}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, 0, fmt.Errorf("encode sync request: %w", err)
	}
	return body, n, nil
}

// executorPod is an executor Pod as Spark 3.5's driver creates it and the API server returns it
// once the kubelet runs it: managedFields of both writers included, which are a third of it.
func executorPod(id int) *corev1.Pod {
	name := fmt.Sprintf("%s-exec-%d", podNamePrefix, id)
	execID := strconv.Itoa(id)
	started := metav1.NewTime(time.Date(2026, 3, 8, 6, 0, 12, 0, time.UTC))
	created := metav1.NewTime(time.Date(2026, 3, 8, 6, 0, 8, 0, time.UTC))
	podIP := fmt.Sprintf("10.%d.%d.%d", 64+id/65536, id/256%256, id%256)
	hostIP := fmt.Sprintf("192.168.%d.%d", id/200%256, 10+id%200)
	memory := resource.MustParse("896Mi")
	grace := int64(30)
	tolerationSeconds := int64(300)
	tokenSeconds := int64(3607)
	mode := int32(420)
	controller := true
	return &corev1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Name:              name,
			Namespace:         appNamespace,
			UID:               types.UID(fmt.Sprintf("0b6c2a5e-%04x-4d1f-9b0e-%012x", id%65536, id)),
			ResourceVersion:   strconv.Itoa(48_000_000 + id*7),
			CreationTimestamp: created,
			Labels: map[string]string{
				"spark-app-name":                appName,
				"spark-app-selector":            appSelector,
				"spark-exec-id":                 execID,
				"spark-exec-resourceprofile-id": "0",
				"spark-role":                    "executor",
				"spark-version":                 "3.5.3",
				"sparkoperator.k8s.io/app-name": appName,
				"sparkoperator.k8s.io/launched-by-spark-operator": "true",
				"sparkoperator.k8s.io/submission-id":              submissionID,
			},
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "v1", Kind: "Pod", Name: driverPodName, UID: driverPodUID, Controller: &controller,
			}},
			ManagedFields: []metav1.ManagedFieldsEntry{
				{
					Manager: "okhttp", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					Time: &created, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(driverFields),
				},
				{
					Manager: "kubelet", Operation: metav1.ManagedFieldsOperationUpdate, APIVersion: "v1",
					Time: &started, FieldsType: "FieldsV1", FieldsV1: metav1.NewFieldsV1(kubeletFields),
					Subresource: "status",
				},
			},
		},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{
				Name:  "spark-kubernetes-executor",
				Image: sparkImage,
				Args:  []string{"executor"},
				Ports: []corev1.ContainerPort{{Name: "blockmanager", ContainerPort: 7079, Protocol: corev1.ProtocolTCP}},
				Env: []corev1.EnvVar{
					{Name: "SPARK_USER", Value: "spark"},
					{Name: "SPARK_DRIVER_URL", Value: "spark://CoarseGrainedScheduler@spark-pi-driver-svc.spark-jobs.svc:7078"},
					{Name: "SPARK_EXECUTOR_CORES", Value: "1"},
					{Name: "SPARK_EXECUTOR_MEMORY", Value: "512m"},
					{Name: "SPARK_APPLICATION_ID", Value: appSelector},
					{Name: "SPARK_CONF_DIR", Value: "/opt/spark/conf"},
					{Name: "SPARK_EXECUTOR_ID", Value: execID},
					{Name: "SPARK_RESOURCE_PROFILE_ID", Value: "0"},
					{Name: "SPARK_EXECUTOR_POD_IP", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "status.podIP"}}},
					{Name: "SPARK_EXECUTOR_POD_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.name"}}},
					{Name: "SPARK_JAVA_OPT_0", Value: "-Dspark.driver.port=7078"},
					{Name: "SPARK_JAVA_OPT_1", Value: "-Dspark.driver.blockManager.port=7079"},
					{Name: "SPARK_LOCAL_DIRS", Value: localDir},
				},
				Resources: corev1.ResourceRequirements{
					Limits:   corev1.ResourceList{corev1.ResourceMemory: memory},
					Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1"), corev1.ResourceMemory: memory},
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: "spark-local-dir-1", MountPath: localDir},
					{Name: "spark-conf-volume-exec", MountPath: "/opt/spark/conf"},
					{Name: "kube-api-access-7xk2p", ReadOnly: true, MountPath: "/var/run/secrets/kubernetes.io/serviceaccount"},
				},
				TerminationMessagePath:   "/dev/termination-log",
				TerminationMessagePolicy: corev1.TerminationMessageReadFile,
				ImagePullPolicy:          corev1.PullIfNotPresent,
			}},
			Volumes: []corev1.Volume{
				{Name: "spark-local-dir-1", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
				{Name: "spark-conf-volume-exec", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: "spark-exec-4b0e6f8e1d2c3a49-conf-map"},
					Items:                []corev1.KeyToPath{{Key: "spark-env.sh", Path: "spark-env.sh"}},
					DefaultMode:          &mode,
				}}},
				{Name: "kube-api-access-7xk2p", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
					Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{ExpirationSeconds: &tokenSeconds, Path: "token"}},
						{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "kube-root-ca.crt"}, Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}}},
						{DownwardAPI: &corev1.DownwardAPIProjection{Items: []corev1.DownwardAPIVolumeFile{{Path: "namespace", FieldRef: &corev1.ObjectFieldSelector{APIVersion: "v1", FieldPath: "metadata.namespace"}}}}},
					},
					DefaultMode: &mode,
				}}},
			},
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			DNSPolicy:                     corev1.DNSClusterFirst,
			ServiceAccountName:            "spark",
			DeprecatedServiceAccount:      "spark",
			NodeName:                      fmt.Sprintf("ip-192-168-%d-%d.ec2.internal", id/200%256, 10+id%200),
			Hostname:                      name,
			SecurityContext:               &corev1.PodSecurityContext{},
			SchedulerName:                 corev1.DefaultSchedulerName,
			Tolerations: []corev1.Toleration{
				{Key: "node.kubernetes.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolerationSeconds},
				{Key: "node.kubernetes.io/unreachable", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &tolerationSeconds},
			},
		},
		Status: corev1.PodStatus{
			Phase: corev1.PodRunning,
			Conditions: []corev1.PodCondition{
				{Type: "PodReadyToStartContainers", Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: created},
				{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.ContainersReady, Status: corev1.ConditionTrue, LastTransitionTime: started},
				{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: created},
			},
			HostIP:    hostIP,
			HostIPs:   []corev1.HostIP{{IP: hostIP}},
			PodIP:     podIP,
			PodIPs:    []corev1.PodIP{{IP: podIP}},
			StartTime: &created,
			ContainerStatuses: []corev1.ContainerStatus{{
				Name:         "spark-kubernetes-executor",
				State:        corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}},
				Ready:        true,
				Image:        "docker.io/" + sparkImage,
				ImageID:      "docker.io/apache/spark@sha256:8f2b2d5b4e4c7c0a3c3a0c5f0f3d9e6b1a2c4d5e6f708192a3b4c5d6e7f80912",
				ContainerID:  fmt.Sprintf("containerd://%064x", id),
				Started:      &controller,
				RestartCount: 0,
			}},
			QOSClass: corev1.PodQOSBurstable,
		},
	}
}

// driverFields is what the driver's Kubernetes client owns: everything it set at creation.
const driverFields = `{"f:metadata":{"f:labels":{".":{},"f:spark-app-name":{},"f:spark-app-selector":{},"f:spark-exec-id":{},"f:spark-exec-resourceprofile-id":{},"f:spark-role":{},"f:spark-version":{},"f:sparkoperator.k8s.io/app-name":{},"f:sparkoperator.k8s.io/launched-by-spark-operator":{},"f:sparkoperator.k8s.io/submission-id":{}},"f:ownerReferences":{".":{},"k:{\"uid\":\"child-2\"}":{}}},"f:spec":{"f:containers":{"k:{\"name\":\"spark-kubernetes-executor\"}":{".":{},"f:args":{},"f:env":{".":{},"k:{\"name\":\"SPARK_APPLICATION_ID\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_CONF_DIR\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_DRIVER_URL\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_EXECUTOR_CORES\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_EXECUTOR_ID\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_EXECUTOR_MEMORY\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_EXECUTOR_POD_IP\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}},"k:{\"name\":\"SPARK_EXECUTOR_POD_NAME\"}":{".":{},"f:name":{},"f:valueFrom":{".":{},"f:fieldRef":{}}},"k:{\"name\":\"SPARK_JAVA_OPT_0\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_JAVA_OPT_1\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_LOCAL_DIRS\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_RESOURCE_PROFILE_ID\"}":{".":{},"f:name":{},"f:value":{}},"k:{\"name\":\"SPARK_USER\"}":{".":{},"f:name":{},"f:value":{}}},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\"containerPort\":7079,\"protocol\":\"TCP\"}":{".":{},"f:containerPort":{},"f:name":{},"f:protocol":{}}},"f:resources":{".":{},"f:limits":{".":{},"f:memory":{}},"f:requests":{".":{},"f:cpu":{},"f:memory":{}}},"f:terminationMessagePath":{},"f:terminationMessagePolicy":{},"f:volumeMounts":{".":{},"k:{\"mountPath\":\"/opt/spark/conf\"}":{".":{},"f:mountPath":{},"f:name":{}},"k:{\"mountPath\":\"/var/data/spark-6f1b7a7e-3f55-4c1c-9d6e-0c6d5b0e4a17\"}":{".":{},"f:mountPath":{},"f:name":{}}}}},"f:dnsPolicy":{},"f:enableServiceLinks":{},"f:hostname":{},"f:restartPolicy":{},"f:schedulerName":{},"f:securityContext":{},"f:serviceAccount":{},"f:serviceAccountName":{},"f:terminationGracePeriodSeconds":{},"f:volumes":{".":{},"k:{\"name\":\"spark-conf-volume-exec\"}":{".":{},"f:configMap":{".":{},"f:defaultMode":{},"f:items":{},"f:name":{}},"f:name":{}},"k:{\"name\":\"spark-local-dir-1\"}":{".":{},"f:emptyDir":{},"f:name":{}}}}}`

// kubeletFields is what the kubelet owns: the status.
const kubeletFields = `{"f:status":{"f:conditions":{"k:{\"type\":\"ContainersReady\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Initialized\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"PodReadyToStartContainers\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}},"k:{\"type\":\"Ready\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:containerStatuses":{},"f:hostIP":{},"f:hostIPs":{},"f:phase":{},"f:podIP":{},"f:podIPs":{".":{},"k:{\"ip\":\"10.64.0.1\"}":{".":{},"f:ip":{}}},"f:startTime":{}}}`
