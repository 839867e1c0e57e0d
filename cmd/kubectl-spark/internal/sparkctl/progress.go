package sparkctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// The fields of Spark's monitoring REST API (/api/v1, the classes of
// org.apache.spark.status.api.v1) that progress reads. The driver's UI and the History Server
// answer the same shapes.

// restJob is one element of GET applications/ID/jobs (JobData).
type restJob struct {
	JobID              int    `json:"jobId"`
	Name               string `json:"name"`
	Status             string `json:"status"` // RUNNING, SUCCEEDED, FAILED, UNKNOWN
	StageIDs           []int  `json:"stageIds"`
	NumTasks           int    `json:"numTasks"`
	NumActiveTasks     int    `json:"numActiveTasks"`
	NumCompletedTasks  int    `json:"numCompletedTasks"`
	NumSkippedTasks    int    `json:"numSkippedTasks"`
	NumFailedTasks     int    `json:"numFailedTasks"`
	NumKilledTasks     int    `json:"numKilledTasks"`
	NumActiveStages    int    `json:"numActiveStages"`
	NumCompletedStages int    `json:"numCompletedStages"`
	NumSkippedStages   int    `json:"numSkippedStages"`
	NumFailedStages    int    `json:"numFailedStages"`
}

// restStage is one element of GET applications/ID/stages (StageData), one per stage attempt.
type restStage struct {
	Status           string `json:"status"` // ACTIVE, COMPLETE, FAILED, PENDING, SKIPPED
	StageID          int    `json:"stageId"`
	AttemptID        int    `json:"attemptId"`
	Name             string `json:"name"`
	NumTasks         int    `json:"numTasks"`
	NumActiveTasks   int    `json:"numActiveTasks"`
	NumCompleteTasks int    `json:"numCompleteTasks"`
	NumFailedTasks   int    `json:"numFailedTasks"`
	NumKilledTasks   int    `json:"numKilledTasks"`
}

// restExecutor is one element of GET applications/ID/allexecutors (ExecutorSummary): the
// driver's entry ("driver") and every executor, removed ones with isActive false.
type restExecutor struct {
	ID               string `json:"id"`
	HostPort         string `json:"hostPort"`
	IsActive         bool   `json:"isActive"`
	TotalCores       int    `json:"totalCores"`
	MaxTasks         int    `json:"maxTasks"`
	ActiveTasks      int    `json:"activeTasks"`
	FailedTasks      int    `json:"failedTasks"`
	CompletedTasks   int    `json:"completedTasks"`
	TotalInputBytes  int64  `json:"totalInputBytes"`
	TotalShuffleRead int64  `json:"totalShuffleRead"`
}

// Progress is how far an application's Spark jobs are, as its driver (or the History Server)
// reports them: what status prints and watch redraws, and watch -o json writes.
type Progress struct {
	// Source is where it was read: "driver" (the live UI) or "history" (the History Server).
	Source        string `json:"source"`
	ApplicationID string `json:"applicationID"`
	Jobs          Counts `json:"jobs"`
	Stages        Counts `json:"stages"`
	Tasks         Counts `json:"tasks"`
	// ActiveStages are the stages that run now, oldest first.
	ActiveStages []StageProgress `json:"activeStages"`
	// Executors are the live executors, by ID (the driver's own entry is left out: in cluster
	// mode it runs no tasks).
	Executors []ExecutorProgress `json:"executors"`
	// InputBytes and ShuffleReadBytes are what every executor, removed ones included, has
	// read so far.
	InputBytes       int64 `json:"inputBytes"`
	ShuffleReadBytes int64 `json:"shuffleReadBytes"`
}

// Counts of jobs, stages or tasks. Total counts what Spark knows of: jobs not yet submitted
// are not in it.
type Counts struct {
	Total   int `json:"total"`
	Done    int `json:"done"`
	Running int `json:"running"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped,omitempty"`
	Killed  int `json:"killed,omitempty"`
}

// StageProgress is one running stage attempt.
type StageProgress struct {
	StageID   int    `json:"stageID"`
	AttemptID int    `json:"attemptID"`
	Name      string `json:"name"`
	Tasks     Counts `json:"tasks"`
}

// ExecutorProgress is one live executor.
type ExecutorProgress struct {
	ID          string `json:"id"`
	Cores       int    `json:"cores"`
	ActiveTasks int    `json:"activeTasks"`
	DoneTasks   int    `json:"doneTasks"`
	FailedTasks int    `json:"failedTasks"`
}

// progressSource is where an application's REST API answers: a Service's port and the path of
// the API under it.
type progressSource struct {
	kind string // "driver" or "history"
	svc  serviceRef
	api  string // "/api/v1" on the driver, BASE/api/v1 on a History Server under a path
}

// errNoProgress says why an application has no progress to show (not an error of the command).
type errNoProgress struct{ reason string }

func (e *errNoProgress) Error() string { return e.reason }

// waitingForDriverUI is the note while a driver's UI cannot answer yet: its Service has no ready
// endpoint, its port refuses, it serves a start-up page, or its REST API does not know the
// application yet.
const waitingForDriverUI = "waiting for the driver's UI…"

func noProgress(format string, args ...any) error {
	return &errNoProgress{reason: fmt.Sprintf(format, args...)}
}

// driverSource is the driver's live UI, through its UI Service.
func driverSource(app *v1beta2.SparkApplication) (progressSource, error) {
	info := app.Status.DriverInfo
	if info.WebUIServiceName == "" || info.WebUIPort == 0 {
		return progressSource{}, noProgress("the driver has no UI Service (spark.ui.enabled is false, or the operator runs without UI Services)")
	}
	return progressSource{kind: "driver", api: "/api/v1",
		svc: serviceRef{Namespace: app.Namespace, Name: info.WebUIServiceName, Port: strconv.Itoa(int(info.WebUIPort))}}, nil
}

// historySource is the History Server of status.historyURL, when that is a Service's in-cluster
// address (NAME.NAMESPACE.svc[:PORT]/[BASE/]history/ID/...): the service proxy reaches only
// Services; a URL outside the cluster is for the user's browser.
func historySource(app *v1beta2.SparkApplication) (progressSource, error) {
	history := app.Status.HistoryURL
	if history == "" {
		return progressSource{}, noProgress("the driver has ended and the application has no History Server page (status.historyURL)")
	}
	u, err := url.Parse(history)
	if err != nil {
		return progressSource{}, noProgress("status.historyURL %q: %v", history, err)
	}
	name, namespace, ok := inClusterService(u.Hostname())
	if !ok {
		return progressSource{}, noProgress("the History Server at %s is not a Service in the cluster: the API server's service proxy cannot reach it (open the page instead)", u.Host)
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	if u.Scheme == "https" {
		// The service proxy's syntax for a TLS backend.
		name = "https:" + name
	}
	base, _, _ := strings.Cut(u.Path, "/history/")
	return progressSource{kind: "history", api: strings.TrimRight(base, "/") + "/api/v1",
		svc: serviceRef{Namespace: namespace, Name: name, Port: port}}, nil
}

// sourceFor is where the application's progress is now: its driver while it runs, the History
// Server once it has ended.
func sourceFor(app *v1beta2.SparkApplication) (progressSource, error) {
	if app.Status.SparkApplicationID == "" {
		return progressSource{}, noProgress("no Spark application ID yet")
	}
	if terminal(app.Status.AppState.State) {
		return historySource(app)
	}
	return driverSource(app)
}

// fetchProgress reads the application's jobs, running stages and executors from src.
func fetchProgress(ctx context.Context, proxy ProxyFunc, src progressSource, appID string) (*Progress, error) {
	base := src.api + "/applications/" + appID
	var jobs []restJob
	if err := getJSON(ctx, proxy, src, base+"/jobs", nil, &jobs); err != nil {
		return nil, err
	}
	var stages []restStage
	if err := getJSON(ctx, proxy, src, base+"/stages", url.Values{"status": {"active"}}, &stages); err != nil {
		return nil, err
	}
	var executors []restExecutor
	if err := getJSON(ctx, proxy, src, base+"/allexecutors", nil, &executors); err != nil {
		return nil, err
	}
	p := summarize(jobs, stages, executors)
	p.Source, p.ApplicationID = src.kind, appID
	return p, nil
}

func getJSON(ctx context.Context, proxy ProxyFunc, src progressSource, path string, query url.Values, into any) error {
	body, err := proxy(ctx, src.svc, path, query)
	if err != nil {
		return proxyError(src, path, err)
	}
	if err := json.Unmarshal(body, into); err != nil {
		if src.kind == "driver" {
			// The page a starting driver's UI serves before its REST API is up.
			return noProgress(waitingForDriverUI)
		}
		return fmt.Errorf("%s through %s: not Spark's REST API: %w", path, src.svc, err)
	}
	return nil
}

// proxyError says what a failed request through the service proxy means for the user.
func proxyError(src progressSource, path string, err error) error {
	what := "the driver's UI"
	if src.kind == "history" {
		what = "the History Server"
	}
	switch {
	case apierrors.IsForbidden(err):
		return noProgress("reading %s needs services/proxy on %s: %v", what, src.svc, shortError(err))
	case src.kind == "history" && apierrors.IsNotFound(err):
		return noProgress("the History Server has no such application (yet: it reads new event logs every few seconds)")
	case src.kind == "driver" && (apierrors.IsServiceUnavailable(err) || apierrors.IsNotFound(err)):
		// No ready endpoint, a refused port, or a REST API that does not know the application
		// yet: the moments of every driver's start, not errors to show.
		return noProgress(waitingForDriverUI)
	case apierrors.IsServiceUnavailable(err):
		return noProgress("%s does not answer yet: %s", what, shortError(err))
	}
	var status apierrors.APIStatus
	if errors.As(err, &status) {
		return noProgress("%s through %s: %s", path, src.svc, shortError(err))
	}
	return fmt.Errorf("%s through %s: %w", path, src.svc, err)
}

// shortError is the first line of an error, without the body the REST client appends.
func shortError(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	msg, _, _ = strings.Cut(msg, " (get services ")
	return msg
}

// summarize adds up the REST API's answers.
func summarize(jobs []restJob, stages []restStage, executors []restExecutor) *Progress {
	p := &Progress{ActiveStages: []StageProgress{}, Executors: []ExecutorProgress{}}
	for _, j := range jobs {
		p.Jobs.Total++
		switch j.Status {
		case "SUCCEEDED":
			p.Jobs.Done++
		case "RUNNING":
			p.Jobs.Running++
		case "FAILED":
			p.Jobs.Failed++
		}
		p.Stages.Total += len(j.StageIDs)
		p.Stages.Done += j.NumCompletedStages
		p.Stages.Running += j.NumActiveStages
		p.Stages.Failed += j.NumFailedStages
		p.Stages.Skipped += j.NumSkippedStages
		p.Tasks.Total += j.NumTasks
		p.Tasks.Done += j.NumCompletedTasks
		p.Tasks.Running += j.NumActiveTasks
		p.Tasks.Failed += j.NumFailedTasks
		p.Tasks.Skipped += j.NumSkippedTasks
		p.Tasks.Killed += j.NumKilledTasks
	}
	for _, s := range stages {
		if s.Status != "ACTIVE" {
			continue
		}
		p.ActiveStages = append(p.ActiveStages, StageProgress{StageID: s.StageID, AttemptID: s.AttemptID, Name: s.Name,
			Tasks: Counts{Total: s.NumTasks, Done: s.NumCompleteTasks, Running: s.NumActiveTasks, Failed: s.NumFailedTasks, Killed: s.NumKilledTasks}})
	}
	slices.SortFunc(p.ActiveStages, func(a, b StageProgress) int { return a.StageID - b.StageID })
	for _, e := range executors {
		p.InputBytes += e.TotalInputBytes
		p.ShuffleReadBytes += e.TotalShuffleRead
		if !e.IsActive || e.ID == "driver" {
			continue
		}
		p.Executors = append(p.Executors, ExecutorProgress{ID: e.ID, Cores: e.TotalCores, ActiveTasks: e.ActiveTasks, DoneTasks: e.CompletedTasks, FailedTasks: e.FailedTasks})
	}
	slices.SortFunc(p.Executors, func(a, b ExecutorProgress) int { return compareIDs(a.ID, b.ID) })
	return p
}

// compareIDs orders executor IDs as numbers ("2" before "10"), others after them by name.
func compareIDs(a, b string) int {
	na, errA := strconv.Atoi(a)
	nb, errB := strconv.Atoi(b)
	switch {
	case errA == nil && errB == nil:
		return na - nb
	case errA == nil:
		return -1
	case errB == nil:
		return 1
	}
	return strings.Compare(a, b)
}
