package children

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

// maxConfigMapBytes is what the API server stores of one object; the ConfigMap must fit with
// its metadata.
const maxConfigMapBytes = 1 << 20

// configMap writes spark.properties and the executor pod template into one immutable ConfigMap
// named by its content: an attempt with other properties gets another ConfigMap, and nothing
// ever edits one under a running driver. Apache's name is fixed instead; the sync hook keeps an
// attempt's ConfigMap as it was created (sparkapp's attemptConfigMap).
func (b *builder) configMap() error {
	header := fmt.Sprintf("Spark properties of SparkApplication %s/%s, attempt %d (%s), written by sparkhooks",
		b.namespace(), b.app.Name, b.sub.Attempt, b.sub.SubmissionID)
	props := b.conf.marshal(header)
	data := map[string]string{propertiesFile: string(props)}
	size := len(props) + len(propertiesFile)
	sum := sha256.New()
	sum.Write(props)
	if b.executorPodTemplate != nil {
		data[executorTemplateKey] = string(b.executorPodTemplate)
		size += len(b.executorPodTemplate) + len(executorTemplateKey)
		sum.Write([]byte{0})
		sum.Write(b.executorPodTemplate)
	}
	if size > maxConfigMapBytes-16<<10 {
		return buildErrorf("the Spark properties and executor pod template take %d bytes, more than a ConfigMap holds (1 MiB with its metadata); move large values (sparkConf, hadoopConf, pod templates) into files the image or a mounted ConfigMap provides",
			size)
	}
	name := boundedName(b.app.Name, "-"+hex.EncodeToString(sum.Sum(nil))[:10]+"-conf", maxSubdomainName)
	if b.opts.Apache {
		// Apache's name; a new attempt waits for the old attempt's children to go, so the
		// name is free again by then.
		name = boundedName(b.app.Name, "-0-spark-drv-conf-map", maxSubdomainName)
	}
	immutable := true
	b.objs.ConfigMap = &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{Kind: "ConfigMap", APIVersion: "v1"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      name,
			Namespace: b.namespace(),
			Labels: map[string]string{
				sparkpod.LabelAppName:      b.app.Name,
				sparkpod.LabelAppSelector:  b.sub.AppID,
				sparkpod.LabelSubmissionID: b.sub.SubmissionID,
			},
		},
		Immutable: &immutable,
		Data:      data,
	}
	return nil
}
