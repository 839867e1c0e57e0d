package sparkctl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/schedule"
	"github.com/sparkhooks/sparkhooks/internal/sparkpod"
)

type createOptions struct {
	file          string
	from          string
	deleteFirst   bool
	follow        bool
	hadoopConfDir string
	uploadTo      string
	override      bool
}

func (c *cli) createCmd() *cobra.Command {
	var o createOptions
	cmd := &cobra.Command{
		Use:   "create (-f FILE | [NAME] --from SCHEDULED)",
		Short: "Create applications from a file, or run a ScheduledSparkApplication now",
		Long: `Create the SparkApplications, ScheduledSparkApplications and SparkConnects in FILE
("-" reads stdin), or, with --from, run a ScheduledSparkApplication now: the run is made as
the schedule makes its own (name, labels, owner), so the schedule counts it in its history.

With HADOOP_CONF_DIR set (or --hadoop-conf-dir), the files of that directory become a
ConfigMap owned by the application and spec.hadoopConfigMap names it.

Local files in mainApplicationFile and deps.jars/files/pyFiles are uploaded to --upload-to
(s3://bucket/prefix or gs://bucket/prefix) under spark-app-dependencies/NAMESPACE/NAME/ and
replaced by their remote URIs (s3a:// for S3, which is how Spark reads S3).`,
		Args: usageArgs(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.hadoopConfDir == "" {
				o.hadoopConfDir = c.env.Getenv("HADOOP_CONF_DIR")
			}
			switch {
			case o.from != "" && o.file != "":
				return usageErrorf("-f and --from exclude each other")
			case o.from != "":
				name := ""
				if len(args) == 1 {
					name = args[0]
				}
				return c.createFrom(cmd, name, &o)
			case o.file == "":
				return usageErrorf("create needs -f FILE or --from SCHEDULED")
			case len(args) > 0:
				return usageErrorf("create -f takes no NAME (the file names the objects)")
			}
			return c.createFromFile(cmd, &o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.file, "filename", "f", "", "the YAML or JSON file of the objects to create (- for stdin)")
	f.StringVar(&o.from, "from", "", "run this ScheduledSparkApplication now")
	f.BoolVar(&o.deleteFirst, "delete", false, "delete an existing object of the same name first, and wait until it is gone")
	f.BoolVar(&o.follow, "follow", false, "print the driver's log, across retries, until the application ends; exit 3 if it failed")
	f.StringVar(&o.hadoopConfDir, "hadoop-conf-dir", "", "make a ConfigMap of this directory's files for spec.hadoopConfigMap (default $HADOOP_CONF_DIR)")
	f.StringVar(&o.uploadTo, "upload-to", "", "stage local dependencies here: s3://bucket[/prefix] or gs://bucket[/prefix]")
	f.BoolVar(&o.override, "override", false, "replace staged objects that exist already")
	return cmd
}

// readObjects decodes every document of the file.
func readObjects(path string, stdin io.Reader) ([]*unstructured.Unstructured, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(path)
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for i := 1; ; i++ {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", path, i, err)
		}
		if len(m) == 0 {
			continue
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("%s holds no object", path)
	}
	return objs, nil
}

func (c *cli) createFromFile(cmd *cobra.Command, o *createOptions) error {
	objs, err := readObjects(o.file, c.env.Stdin)
	if err != nil {
		return err
	}
	cl, err := c.connect()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	// Every object is checked and its dependencies staged before anything is created.
	kinds := make([]kind, len(objs))
	for i, obj := range objs {
		k, ok := kindOf(obj.GetAPIVersion(), obj.GetKind())
		if !ok {
			return fmt.Errorf("%s: %s %s is not a kind sparkctl creates (SparkApplication, ScheduledSparkApplication or SparkConnect)", o.file, obj.GetAPIVersion(), obj.GetKind())
		}
		if obj.GetName() == "" {
			return fmt.Errorf("%s: a %s without metadata.name (generateName is not supported)", o.file, k.Kind)
		}
		switch ns := obj.GetNamespace(); {
		case ns == "":
			obj.SetNamespace(cl.Namespace)
		case c.conn.Namespace != "" && ns != c.conn.Namespace:
			return fmt.Errorf("%s: %s %s is in namespace %q, not %q as -n says", o.file, k.Kind, obj.GetName(), ns, c.conn.Namespace)
		}
		kinds[i] = k
	}
	if o.follow && (len(objs) != 1 || kinds[0].Kind != kindSparkApp.Kind) {
		return usageErrorf("--follow follows one SparkApplication; %s holds %d object(s)", o.file, len(objs))
	}
	for i, obj := range objs {
		if err := c.stage(ctx, kinds[i], obj, o); err != nil {
			return err
		}
	}
	for i, obj := range objs {
		if err := c.createObject(ctx, cl, kinds[i], obj, o); err != nil {
			return err
		}
	}
	if o.follow {
		return c.follow(ctx, cl, objs[0].GetNamespace(), objs[0].GetName())
	}
	return nil
}

// createFrom makes a run of a ScheduledSparkApplication now.
func (c *cli) createFrom(cmd *cobra.Command, name string, o *createOptions) error {
	cl, err := c.connect()
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	ssa, err := getScheduled(ctx, cl, cl.Namespace, o.from)
	if err != nil {
		return err
	}
	obj, err := runOf(ssa, name, c.env.Now())
	if err != nil {
		return err
	}
	if err := c.stage(ctx, kindSparkApp, obj, o); err != nil {
		return err
	}
	if err := c.createObject(ctx, cl, kindSparkApp, obj, o); err != nil {
		return err
	}
	if o.follow {
		return c.follow(ctx, cl, obj.GetNamespace(), obj.GetName())
	}
	return nil
}

// runOf is the run of ssa at now, as the schedule hook builds its own, made its child as
// Metacontroller makes the hook's runs: a controller owner reference, and the controller-uid
// label its generated selector matches (an owned child without it is released).
func runOf(ssa *v1beta2.ScheduledSparkApplication, name string, now time.Time) (*unstructured.Unstructured, error) {
	run := schedule.NewRun(ssa, now.Truncate(time.Second))
	if name != "" {
		run.Name = name
	}
	run.Labels[sparkpod.LabelControllerUID] = string(ssa.UID)
	yes := true
	run.OwnerReferences = []metav1.OwnerReference{{
		APIVersion: v1beta2.GroupVersion.String(), Kind: v1beta2.KindScheduledSparkApplication,
		Name: ssa.Name, UID: ssa.UID, Controller: &yes, BlockOwnerDeletion: &yes,
	}}
	obj, err := toUnstructured(run)
	if err != nil {
		return nil, err
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	unstructured.RemoveNestedField(obj.Object, "metadata", "creationTimestamp")
	return obj, nil
}

// createObject creates one object with its Hadoop ConfigMap, deleting an existing one first if
// asked to.
func (c *cli) createObject(ctx context.Context, cl *Clients, k kind, obj *unstructured.Unstructured, o *createOptions) error {
	ns, name := obj.GetNamespace(), obj.GetName()
	client := cl.Dynamic.Resource(k.GVR).Namespace(ns)
	if o.deleteFirst {
		old, err := client.Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("reading %s %s/%s: %w", k.Kind, ns, name, err)
		default:
			if err := c.deleteObject(ctx, cl, k, ns, name, true); err != nil {
				return err
			}
			if err := c.deleteOwnedHadoopConfig(ctx, cl, ns, name, old.GetUID()); err != nil {
				return err
			}
			fmt.Fprintf(c.env.Stderr, "%s/%s deleted\n", k.resourceName(), name)
		}
	}
	cm, err := c.hadoopConfigMap(k, obj, o)
	if err != nil {
		return err
	}
	if cm != nil {
		// Created before the application, so its driver never waits for the volume.
		if err := createConfigMap(ctx, cl, cm); err != nil {
			return fmt.Errorf("creating ConfigMap %s/%s from %s: %w", ns, cm.Name, o.hadoopConfDir, err)
		}
	}
	created, err := client.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		if cm != nil {
			_ = deleteConfigMap(context.WithoutCancel(ctx), cl, ns, cm.Name, nil)
		}
		if apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("%s %q exists in namespace %q: delete it, or pass --delete", k.Kind, name, ns)
		}
		return fmt.Errorf("creating %s %s/%s: %w", k.Kind, ns, name, err)
	}
	if cm != nil {
		if err := ownConfigMap(ctx, cl, created, cm.Name); err != nil {
			return err
		}
	}
	fmt.Fprintf(c.env.Stdout, "%s/%s created\n", k.resourceName(), name)
	return nil
}

// follow prints the driver's log of every attempt, and the application's progress, until the
// application ends. On a terminal the progress is redrawn below the log as it scrolls; elsewhere
// the log is all of stdout, and state changes and progress lines go to stderr.
func (c *cli) follow(ctx context.Context, cl *Clients, ns, name string) error {
	logOut, notes := c.env.Stdout, c.env.Stderr
	v := &view{now: c.env.Now, out: c.env.Stderr, progressOnly: true}
	if width, ok := c.env.Terminal(c.env.Stdout); ok {
		v.live = &liveBlock{w: c.env.Stdout, width: width}
		v.out, logOut, notes = c.env.Stdout, v.live, v.live
	}
	followed := map[types.UID]bool{}
	lastState := v1beta2.ApplicationStateType("-")
	// streaming is closed when the log being printed ends; nil while none is.
	var streaming chan struct{}
	waitStream := func() error {
		if streaming == nil {
			return nil
		}
		select {
		case <-streaming:
			streaming = nil
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	defer func() { _ = waitStream() }()
	onPoll := func(app *v1beta2.SparkApplication) error {
		state := app.Status.AppState.State
		end := terminal(state)
		if end {
			// The last attempt's log first, whole, then the final state and lines.
			if err := waitStream(); err != nil {
				return err
			}
		}
		if state != lastState && state != "" {
			fmt.Fprintf(notes, "%s: %s\n", name, state)
			lastState = state
		}
		if streaming != nil {
			select {
			case <-streaming:
				streaming = nil
			default:
				return nil
			}
		}
		pod, err := getPodObject(ctx, cl, ns, driverPodName(app))
		switch {
		case apierrors.IsNotFound(err):
			return nil
		case err != nil:
			return fmt.Errorf("reading the driver pod of %s: %w", name, err)
		case followed[pod.UID] || pod.DeletionTimestamp != nil || !started(pod, containerOf(pod)):
			return nil
		}
		followed[pod.UID] = true
		done := make(chan struct{})
		stream := func() {
			defer close(done)
			if err := streamLog(ctx, cl, pod, containerOf(pod), true, false, logOut); err != nil {
				fmt.Fprintf(notes, "%v\n", err)
			}
			if v.live != nil {
				v.live.endLine()
			}
		}
		if end {
			stream()
			return nil
		}
		streaming = done
		go stream()
		return nil
	}
	return c.watch(ctx, cl, ns, name, v, onPoll)
}

func containerOf(pod *corev1.Pod) string {
	for _, ctr := range pod.Spec.Containers {
		if ctr.Name == "spark-kubernetes-driver" {
			return ctr.Name
		}
	}
	if len(pod.Spec.Containers) > 0 {
		return pod.Spec.Containers[0].Name
	}
	return ""
}
