package apacheapp

import (
	"encoding/json"
	"math"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	sparkv1 "github.com/sparkhooks/sparkhooks/internal/api/sparkapache/v1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
	"github.com/sparkhooks/sparkhooks/internal/hook"
	"github.com/sparkhooks/sparkhooks/internal/metacontroller"
	"github.com/sparkhooks/sparkhooks/internal/sparkapp"
)

// Name is the route segment of the hooks: /apachesparkapplication/sync and so on.
const Name = "apachesparkapplication"

// Hooks are the Apache SparkApplication's hooks with the operator-wide settings of the core.
func Hooks(cfg sparkapp.Config) hook.Kind {
	return hook.Kind{
		Name: Name,
		Sync: func(req *metacontroller.SyncRequest, now time.Time) (*metacontroller.SyncResponse, hook.Outcome, error) {
			return Sync(req, now, cfg)
		},
		// Finalize reports nothing: the parent is on its way out.
		Finalize: func(req *metacontroller.SyncRequest, now time.Time) (*metacontroller.SyncResponse, hook.Outcome, error) {
			if req != nil {
				req.Finalizing = true
			}
			resp, _, err := Sync(req, now, cfg)
			return resp, hook.Outcome{}, err
		},
		Customize: Customize,
	}
}

// parent is a decoded request's parent.
type parent struct {
	app      *sparkv1.SparkApplication
	specErrs field.ErrorList // the spec's problems: what did not decode, else what validation says
}

func decodeParent(raw json.RawMessage) (*parent, error) {
	app, specErrs, err := metacontroller.DecodeParent(raw, sparkv1.GroupVersion.WithKind(sparkv1.KindSparkApplication), true, sparkv1.DecodeSparkApplication)
	if err != nil {
		return nil, err
	}
	if len(specErrs) == 0 {
		specErrs = sparkv1.ValidateSparkApplication(app)
	}
	return &parent{app: app, specErrs: specErrs}, nil
}

// Sync is the sync hook (and, for a finalizing request, the finalize hook): the core decides
// the attempt, and its answer is told again in Apache's states.
func Sync(req *metacontroller.SyncRequest, now time.Time, cfg sparkapp.Config) (*metacontroller.SyncResponse, hook.Outcome, error) {
	if req == nil {
		return nil, hook.Outcome{}, metacontroller.RequestErrorf("empty request")
	}
	p, err := decodeParent(req.Parent)
	if err != nil {
		return nil, hook.Outcome{}, err
	}
	return syncParent(req, p, now, cfg)
}

func syncParent(req *metacontroller.SyncRequest, p *parent, now time.Time, cfg sparkapp.Config) (*metacontroller.SyncResponse, hook.Outcome, error) {
	app := p.app
	cfg.Driver.Apache = true
	observed := coreStatus(&app.Status)
	retain, _ := sparkv1.EffectiveRetainPolicy(app, stoppedAt(observed), metav1.NewTime(now.UTC().Truncate(time.Second)))
	core := sparkv1.CoreApplication(app, retain)
	core.Status = observed
	resp, outcome, err := sparkapp.SyncTranslated(req, core, p.specErrs, now, cfg)
	if err != nil {
		return nil, hook.Outcome{}, err
	}
	answered, ok := resp.Status.(*v1beta2.SparkApplicationStatus)
	if !ok {
		return nil, hook.Outcome{}, metacontroller.RequestErrorf("the core answered a status of type %T", resp.Status)
	}
	if len(p.specErrs) == 0 {
		extraErrs, err := withExtras(app, resp, answered.SparkApplicationID, sparkapp.RequestOptions(cfg.Driver, req.Children))
		if err != nil {
			return nil, hook.Outcome{}, err
		}
		if len(extraErrs) > 0 {
			// The spec cannot be built as asked: the core decides again, on an invalid spec,
			// as it would have had validation known.
			p.specErrs = extraErrs
			return syncParent(req, p, now, cfg)
		}
	}
	t := &teller{app: app, req: req, core: answered, now: now.UTC().Truncate(time.Second), children: resp.Children}
	status := t.status()
	if req.Finalizing {
		t.finalize(&status)
	}
	resp.Status = &status
	// The retain duration runs from the stop this answer may have just decided; the core knows
	// nothing of it, so the sync that releases the children is asked for here.
	if _, retainDue := sparkv1.EffectiveRetainPolicy(app, stoppedAt(*answered), metav1.NewTime(t.now)); !retainDue.IsZero() && !req.Finalizing {
		wait := math.Max(1, math.Ceil(retainDue.Sub(now).Seconds()))
		if resp.ResyncAfterSeconds == 0 || wait < resp.ResyncAfterSeconds {
			resp.ResyncAfterSeconds = wait
		}
	}
	return resp, outcome, nil
}

// Customize asks for what the core asks for: the executor Pods and what the driver's admission
// reads.
func Customize(req *metacontroller.CustomizeRequest) (*metacontroller.CustomizeResponse, error) {
	if req == nil {
		return nil, metacontroller.RequestErrorf("empty request")
	}
	p, err := decodeParent(req.Parent)
	if err != nil {
		return nil, err
	}
	return sparkapp.CustomizeTranslated(req, sparkv1.CoreApplication(p.app, v1beta2.ResourceRetainPolicyNever)), nil
}

// coreStatus is the core's status as the Apache status carries it.
func coreStatus(st *sparkv1.ApplicationStatus) v1beta2.SparkApplicationStatus {
	var out v1beta2.SparkApplicationStatus
	if st.Attempt != nil {
		out = *st.Attempt.DeepCopy()
	}
	out.Conditions = append([]metav1.Condition(nil), st.Conditions...)
	return out
}

// stoppedAt is when the last attempt stopped, for the retain duration; zero while one runs or
// will run again.
func stoppedAt(st v1beta2.SparkApplicationStatus) metav1.Time {
	switch st.AppState.State {
	case v1beta2.ApplicationStateCompleted, v1beta2.ApplicationStateFailed:
		return st.TerminationTime
	}
	return metav1.Time{}
}
