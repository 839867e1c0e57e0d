package compat

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Row is one row of the differences table: the differences it explains and why.
type Row struct {
	// Line is the row's line in the file, for messages.
	Line int
	// Object and Field are patterns of Difference.Object and Difference.Field, where * stands
	// for any text.
	Object, Field string
	// Cases are the corpus cases the row applies to; nil: every case.
	Cases []string
	// Why is the reason, never empty.
	Why string

	object, field *regexp.Regexp
}

// tableHeader is the header row ParseTable looks for, lower-cased, cells trimmed.
var tableHeader = []string{"object", "field", "cases", "kubeflow", "sparkhooks", "why"}

// ParseTable reads the differences table of a Markdown document: the table whose header is
// object | field | cases | Kubeflow | sparkhooks | why. Backquotes in the first three cells are
// dropped (no name or path has one); cases is "all" or a comma-separated list. A row without an object or a reason is an error.
func ParseTable(doc []byte) ([]Row, error) {
	var rows []Row
	in, found := false, false
	scanner := bufio.NewScanner(bytes.NewReader(doc))
	for line := 1; scanner.Scan(); line++ {
		text := strings.TrimSpace(scanner.Text())
		if !strings.HasPrefix(text, "|") {
			in = false
			continue
		}
		cells := splitRow(text)
		switch {
		case !in && !found && equalFold(cells, tableHeader):
			in, found = true, true
			continue
		case !in:
			continue
		case strings.Trim(strings.Join(cells, ""), "-: ") == "":
			continue // the separator row
		}
		if len(cells) != len(tableHeader) {
			return nil, fmt.Errorf("line %d: %d cells, want %d", line, len(cells), len(tableHeader))
		}
		r := Row{Line: line, Object: unquote(cells[0]), Field: unquote(cells[1]), Why: cells[5]}
		if r.Object == "" || r.Why == "" {
			return nil, fmt.Errorf("line %d: a row needs an object and a reason", line)
		}
		if unquote(cells[2]) != "all" {
			for _, name := range strings.Split(cells[2], ",") {
				r.Cases = append(r.Cases, unquote(name))
			}
		}
		r.object, r.field = glob(r.Object), glob(r.Field)
		rows = append(rows, r)
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("no table with the header | %s |", strings.Join(tableHeader, " | "))
	}
	return rows, nil
}

// Explains says whether the row covers difference d of corpus case name.
func (r Row) Explains(name string, d Difference) bool {
	if r.Cases != nil && !slices.Contains(r.Cases, name) {
		return false
	}
	return r.object.MatchString(d.Object) && r.field.MatchString(d.Field)
}

// Unexplained are the differences of case name no row covers; used counts, by row index, the
// differences each row covered.
func Unexplained(rows []Row, name string, diffs []Difference, used map[int]int) []Difference {
	var out []Difference
	for _, d := range diffs {
		explained := false
		for i, r := range rows {
			if r.Explains(name, d) {
				explained = true
				used[i]++
				break
			}
		}
		if !explained {
			out = append(out, d)
		}
	}
	return out
}

func splitRow(text string) []string {
	text = strings.TrimSuffix(strings.TrimPrefix(text, "|"), "|")
	cells := strings.Split(text, "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells
}

func unquote(cell string) string {
	return strings.TrimSpace(strings.ReplaceAll(cell, "`", ""))
}

func equalFold(cells, want []string) bool {
	if len(cells) != len(want) {
		return false
	}
	for i := range cells {
		if !strings.EqualFold(cells[i], want[i]) {
			return false
		}
	}
	return true
}

func glob(pattern string) *regexp.Regexp {
	parts := strings.Split(pattern, "*")
	for i := range parts {
		parts[i] = regexp.QuoteMeta(parts[i])
	}
	return regexp.MustCompile("^" + strings.Join(parts, ".*") + "$")
}
