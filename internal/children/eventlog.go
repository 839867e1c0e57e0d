package children

import (
	"errors"
	"fmt"
	"net/url"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
)

// EventLog is the operator's default for Spark's event log, which a History Server reads to
// show an application's UI after its driver is gone.
type EventLog struct {
	// Dir is spark.eventLog.dir for the applications that set none: a Hadoop file system URI
	// (s3a://bucket/prefix, hdfs://..., file:/spark-events). Empty: no default.
	Dir string
	// Volume, when set, is mounted in the driver at Dir's path, which must then be a local
	// one (file:/...): a ReadWriteMany persistentVolumeClaim, an nfs or a hostPath volume the
	// History Server mounts too. Its name is ignored: in the driver it is EventLogVolumeName.
	Volume *corev1.Volume
}

// EventLogVolumeName is the driver volume of a volume-backed default event log.
const EventLogVolumeName = "spark-event-log"

// Spark's event log properties.
const (
	eventLogEnabled = "spark.eventLog.enabled"
	eventLogDir     = "spark.eventLog.dir"
)

// rollingMaxFileSize is Spark's own default size of a rolled event log file, written out so that
// the properties say what the History Server will find.
const rollingMaxFileSize = "128m"

// Validate refuses a default the builder could not apply to every application.
func (e EventLog) Validate() error {
	if e.Dir == "" {
		if e.Volume != nil {
			return errors.New("an event log volume needs an event log dir to mount it at")
		}
		return nil
	}
	u, err := url.Parse(e.Dir)
	if err != nil {
		return fmt.Errorf("event log dir %q: %w", e.Dir, err)
	}
	if e.Volume == nil {
		switch u.Scheme {
		case "":
			return fmt.Errorf("event log dir %q has no scheme: a local path needs the volume it is on (file:%s and a volume)", e.Dir, e.Dir)
		case "file":
			return fmt.Errorf("event log dir %q is local: without the volume it is on, each log would stay in its driver's container", e.Dir)
		}
		return nil
	}
	if _, err := e.mountPath(); err != nil {
		return err
	}
	if e.Volume.PersistentVolumeClaim == nil && e.Volume.NFS == nil && e.Volume.HostPath == nil {
		return errors.New("the event log volume must be a persistentVolumeClaim, nfs or hostPath volume: the driver writes there and the History Server reads it")
	}
	return nil
}

// mountPath is the local path of Dir, where Volume is mounted.
func (e EventLog) mountPath() (string, error) {
	u, err := url.Parse(e.Dir)
	if err != nil {
		return "", fmt.Errorf("event log dir %q: %w", e.Dir, err)
	}
	if u.Scheme != "file" || u.Host != "" || !path.IsAbs(u.Path) || path.Clean(u.Path) == "/" {
		return "", fmt.Errorf("event log dir %q is on a volume, so it must be a local directory such as file:/spark-events", e.Dir)
	}
	return path.Clean(u.Path), nil
}

// eventLogProperties give an application that has not chosen otherwise the operator's event
// log, key by key: a property the application sets wins, and an application that turns event
// logs off keeps them off. Rolling files (Spark 3.0 and later) keep a long job's log readable by
// the History Server, which otherwise replays one file that only grows; compression (zstd, Spark's
// event log codec since 3.0) makes it a fraction of the size, and Spark 3.x does not compress by
// default.
func (b *builder) eventLogProperties() {
	def := b.opts.EventLog
	if def.Dir == "" {
		return
	}
	c := b.conf
	if v, ok := c[eventLogEnabled]; ok && !strings.EqualFold(strings.TrimSpace(v), "true") {
		return
	}
	c.setIfAbsent(eventLogEnabled, "true")
	c.setIfAbsent(eventLogDir, def.Dir)
	c.setIfAbsent("spark.eventLog.compress", "true")
	if b.version.atLeast(3, 0) {
		c.setIfAbsent("spark.eventLog.rolling.enabled", "true")
		c.setIfAbsent("spark.eventLog.rolling.maxFileSize", rollingMaxFileSize)
	}
}

// defaultEventLog says whether the attempt writes its event log to the operator's default dir,
// where the operator's History Server finds it.
func (b *builder) defaultEventLog() bool {
	def := b.opts.EventLog.Dir
	return def != "" && strings.EqualFold(strings.TrimSpace(b.conf.get(eventLogEnabled)), "true") &&
		strings.TrimSpace(b.conf.get(eventLogDir)) == def
}

// eventLogVolume mounts the default event log's volume in the driver, the only Spark process
// that writes the log.
func (d *driverPodBuild) eventLogVolume() error {
	vol := d.opts.EventLog.Volume
	if vol == nil || !d.objs.DefaultEventLog {
		return nil
	}
	mountPath, err := d.opts.EventLog.mountPath()
	if err != nil {
		return err
	}
	v := *vol.DeepCopy()
	v.Name = EventLogVolumeName
	d.addVolume(v, corev1.VolumeMount{Name: EventLogVolumeName, MountPath: mountPath})
	return nil
}
