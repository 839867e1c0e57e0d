package sparkctl

import (
	"fmt"
	"strings"
	"time"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// barWidth is the width of a progress bar between its brackets.
const barWidth = 30

// bar draws done of total as [=====>    ] with the percentage.
func bar(done, total int) string {
	if total <= 0 {
		return "[" + strings.Repeat(" ", barWidth) + "]   0%"
	}
	done = min(max(done, 0), total)
	filled := done * barWidth / total
	b := strings.Repeat("=", filled)
	if filled < barWidth {
		b += ">" + strings.Repeat(" ", barWidth-filled-1)
	}
	return fmt.Sprintf("[%s] %3d%%", b, done*100/total)
}

// countsText is "3 done, 1 running, 0 failed (of 5)" with skipped and killed when there are any.
func countsText(c Counts) string {
	parts := []string{fmt.Sprintf("%d done", c.Done), fmt.Sprintf("%d running", c.Running), fmt.Sprintf("%d failed", c.Failed)}
	if c.Skipped > 0 {
		parts = append(parts, fmt.Sprintf("%d skipped", c.Skipped))
	}
	if c.Killed > 0 {
		parts = append(parts, fmt.Sprintf("%d killed", c.Killed))
	}
	return strings.Join(parts, ", ") + fmt.Sprintf(" (of %d)", c.Total)
}

// progressRows are the label/value rows of a progress block.
func progressRows(p *Progress) [][2]string {
	rows := [][2]string{
		{"Jobs", countsText(p.Jobs)},
		{"Stages", countsText(p.Stages)},
		// Tasks of skipped stages need not run: they count as done for the bar.
		{"Tasks", bar(p.Tasks.Done+p.Tasks.Skipped, p.Tasks.Total) + "  " + countsText(p.Tasks)},
	}
	for _, s := range p.ActiveStages {
		label := fmt.Sprintf("Stage %d", s.StageID)
		if s.AttemptID > 0 {
			label += fmt.Sprintf(" (attempt %d)", s.AttemptID)
		}
		rows = append(rows, [2]string{label, fmt.Sprintf("%s  %d/%d done, %d running  %s", bar(s.Tasks.Done, s.Tasks.Total), s.Tasks.Done, s.Tasks.Total, s.Tasks.Running, s.Name)})
	}
	rows = append(rows, [2]string{"Executors", executorsText(p.Executors)})
	rows = append(rows, [2]string{"Read", fmt.Sprintf("input %s, shuffle %s", bytesText(p.InputBytes), bytesText(p.ShuffleReadBytes))})
	return rows
}

// executorsText is "2 live, 5 tasks running: 1 (3/4 cores), 2 (2/4 cores)".
func executorsText(execs []ExecutorProgress) string {
	if len(execs) == 0 {
		return "none live"
	}
	running := 0
	each := make([]string, len(execs))
	for i, e := range execs {
		running += e.ActiveTasks
		each[i] = fmt.Sprintf("%s (%d/%d cores)", e.ID, e.ActiveTasks, e.Cores)
	}
	return fmt.Sprintf("%d live, %d task(s) running: %s", len(execs), running, strings.Join(each, ", "))
}

// bytesText is a byte count in binary units, as Spark's UI shows them.
func bytesText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// alignRows writes rows as "Label:  value" lines, labels padded to one width, each line
// prefixed with indent.
func alignRows(indent string, rows [][2]string) []string {
	width := 0
	for _, r := range rows {
		width = max(width, len(r[0]))
	}
	lines := make([]string, len(rows))
	for i, r := range rows {
		lines[i] = fmt.Sprintf("%s%-*s  %s", indent, width+1, r[0]+":", r[1])
	}
	return lines
}

// progressLine is one line of progress for logs and pipes: what plain output prints each time it
// changes.
func progressLine(p *Progress) string {
	parts := []string{
		fmt.Sprintf("jobs %d/%d", p.Jobs.Done, p.Jobs.Total),
		fmt.Sprintf("stages %d/%d", p.Stages.Done+p.Stages.Skipped, p.Stages.Total),
		fmt.Sprintf("tasks %s %d/%d, %d running, %d failed", bar(p.Tasks.Done+p.Tasks.Skipped, p.Tasks.Total), p.Tasks.Done+p.Tasks.Skipped, p.Tasks.Total, p.Tasks.Running, p.Tasks.Failed),
	}
	for _, s := range p.ActiveStages {
		parts = append(parts, fmt.Sprintf("stage %d %d/%d: %s", s.StageID, s.Tasks.Done, s.Tasks.Total, s.Name))
	}
	return strings.Join(parts, "; ")
}

// appHeader is the first line of a watch: the application, its state and for how long.
func appHeader(app *v1beta2.SparkApplication, now time.Time) string {
	state := string(app.Status.AppState.State)
	if state == "" {
		state = "NEW"
	}
	h := app.Name + "  " + state
	if start := app.Status.LastSubmissionAttemptTime; !start.IsZero() && !terminal(app.Status.AppState.State) {
		h += "  " + now.Sub(start.Time).Round(time.Second).String()
	}
	if id := app.Status.SparkApplicationID; id != "" {
		h += "  " + id
	}
	return h
}

// finalLine is what watch prints when the application has ended: its state, how long its
// attempt ran, and what Spark did.
func finalLine(app *v1beta2.SparkApplication, p *Progress) string {
	st := app.Status
	line := fmt.Sprintf("%s %s", app.Name, st.AppState.State)
	if start, end := st.LastSubmissionAttemptTime, st.TerminationTime; !start.IsZero() && !end.IsZero() && end.After(start.Time) {
		line += " after " + end.Sub(start.Time).Round(time.Second).String()
	}
	if p != nil {
		line += fmt.Sprintf(": %d job(s), %d stage(s), %d task(s) done", p.Jobs.Done, p.Stages.Done, p.Tasks.Done)
		if failed := p.Tasks.Failed; failed > 0 {
			line += fmt.Sprintf(", %d failed", failed)
		}
	}
	if msg := st.AppState.ErrorMessage; msg != "" {
		line += ": " + msg
	}
	return line
}

// historyLine names the application's History Server page, where there is one.
func historyLine(app *v1beta2.SparkApplication) string {
	if app.Status.HistoryURL == "" {
		return ""
	}
	return fmt.Sprintf("History Server: %s (kubectl spark ui %s)", app.Status.HistoryURL, app.Name)
}
