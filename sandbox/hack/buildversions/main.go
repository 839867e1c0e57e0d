// Command buildversions fails when two of the executables `make run` builds link different
// versions of one module. The operator (the repository's root module), the sandbox (this
// module) and Kubernetes with Helm (hack/kube) are three Go modules, built one after the other
// on a user's first `make run`; a package compiled for one is reused from the Go build cache by
// the next only when its module is at the same version (and built with the same flags, which
// the Makefile and hack/kube/build.sh share). On two cores that sharing is about a third of the
// first run, so a dependency upgraded in one module alone makes every fresh clone slower without
// failing anything: this check is what fails instead, and prints the `go get` lines that align
// the modules again.
//
// Usage: buildversions DIR:PKG[,PKG...] ...   (DIR relative to the working directory; see `make lint`)
package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strings"

	"golang.org/x/mod/semver"
)

// build is one module directory and the main packages built from it.
type build struct {
	dir      string
	packages []string
}

func main() {
	builds, err := parseBuilds(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "buildversions:", err)
		os.Exit(2)
	}
	modules := make(map[string]map[string]linked, len(builds)) // by build directory, then module path
	for _, b := range builds {
		m, err := linkedModules(b)
		if err != nil {
			fmt.Fprintln(os.Stderr, "buildversions:", err)
			os.Exit(2)
		}
		modules[b.dir] = m
	}
	fixes := mismatches(builds, modules)
	if len(fixes) == 0 {
		return
	}
	fmt.Fprintln(os.Stderr, "these modules are linked at different versions by the executables make run builds, so a first make run compiles them twice; align them:")
	for _, f := range fixes {
		fmt.Fprintln(os.Stderr, "  "+f)
	}
	os.Exit(1)
}

func parseBuilds(args []string) ([]build, error) {
	if len(args) < 2 {
		return nil, fmt.Errorf("want at least two DIR:PKG[,PKG...] arguments, got %d", len(args))
	}
	builds := make([]build, 0, len(args))
	for _, arg := range args {
		dir, pkgs, ok := strings.Cut(arg, ":")
		if !ok || dir == "" || pkgs == "" {
			return nil, fmt.Errorf("argument %q is not DIR:PKG[,PKG...]", arg)
		}
		builds = append(builds, build{dir: dir, packages: strings.Split(pkgs, ",")})
	}
	return builds, nil
}

// linked is a module as a build links it: the version compiled (a replacement's, where the
// module is replaced) and whether go.mod replaces it, which decides how it is moved.
type linked struct {
	version  string
	replaced bool
}

// linkedModules lists the modules whose packages the build links.
func linkedModules(b build) (map[string]linked, error) {
	args := append([]string{"list", "-deps", "-f", "{{with .Module}}{{.Path}} {{.Version}}{{with .Replace}} {{.Version}}{{end}}{{end}}"}, b.packages...)
	cmd := exec.Command("go", args...)
	cmd.Dir = b.dir
	// The Makefile and hack/kube/build.sh build without cgo; the file set, and so the
	// dependencies, follow that setting.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list in %s: %w: %s", b.dir, err, strings.TrimSpace(stderr.String()))
	}
	modules := make(map[string]linked)
	scanner := bufio.NewScanner(bytes.NewReader(out))
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		if len(fields) < 2 {
			continue // the main module has no version
		}
		modules[fields[0]] = linked{version: fields[len(fields)-1], replaced: len(fields) == 3}
	}
	return modules, scanner.Err()
}

// mismatches returns, for every module two builds link at different versions, what raises each
// lower build to the highest version, sorted by module.
func mismatches(builds []build, modules map[string]map[string]linked) []string {
	highest := make(map[string]string)
	for _, b := range builds {
		for module, l := range modules[b.dir] {
			if semver.Compare(l.version, highest[module]) > 0 {
				highest[module] = l.version
			}
		}
	}
	var fixes []string
	for _, b := range builds {
		for module, l := range modules[b.dir] {
			if l.version == highest[module] {
				continue
			}
			fix := fmt.Sprintf("go -C %s get %s@%s", b.dir, module, highest[module])
			if l.replaced {
				fix = fmt.Sprintf("its replace line in %s/go.mod", b.dir)
			}
			fixes = append(fixes, fmt.Sprintf("%s is %s in %s, %s elsewhere: %s", module, l.version, b.dir, highest[module], fix))
		}
	}
	sort.Strings(fixes)
	return fixes
}
