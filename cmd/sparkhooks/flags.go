package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// envDefault lets every flag be set from an environment variable, which is how a Deployment
// usually configures a container; an explicit flag still wins.
type envDefault struct {
	fs     *flag.FlagSet
	lookup func(string) (string, bool)
	errs   []error
}

func newEnvFlags(name string) *envDefault {
	return &envDefault{fs: flag.NewFlagSet(name, flag.ContinueOnError), lookup: os.LookupEnv}
}

func (e *envDefault) string(p *string, name, env, def, usage string) {
	if v, ok := e.lookup(env); ok {
		def = v
	}
	e.fs.StringVar(p, name, def, fmt.Sprintf("%s [%s]", usage, env))
}

func (e *envDefault) int64(p *int64, name, env string, def int64, usage string) {
	if v, ok := e.lookup(env); ok {
		parsed, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: not an integer", env, v))
		} else {
			def = parsed
		}
	}
	e.fs.Int64Var(p, name, def, fmt.Sprintf("%s [%s]", usage, env))
}

func (e *envDefault) duration(p *time.Duration, name, env string, def time.Duration, usage string) {
	if v, ok := e.lookup(env); ok {
		parsed, err := time.ParseDuration(v)
		if err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: not a duration", env, v))
		} else {
			def = parsed
		}
	}
	e.fs.DurationVar(p, name, def, fmt.Sprintf("%s [%s]", usage, env))
}

func (e *envDefault) parse(args []string) error {
	if len(e.errs) > 0 {
		return e.errs[0]
	}
	return e.fs.Parse(args)
}

func (e *envDefault) boolean(p *bool, name, env string, def bool, usage string) {
	if v, ok := e.lookup(env); ok {
		parsed, err := strconv.ParseBool(v)
		if err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: not a boolean", env, v))
		} else {
			def = parsed
		}
	}
	e.fs.BoolVar(p, name, def, fmt.Sprintf("%s [%s]", usage, env))
}

func (e *envDefault) integer(p *int, name, env string, def int, usage string) {
	if v, ok := e.lookup(env); ok {
		parsed, err := strconv.Atoi(v)
		if err != nil {
			e.errs = append(e.errs, fmt.Errorf("%s=%q: not an integer", env, v))
		} else {
			def = parsed
		}
	}
	e.fs.IntVar(p, name, def, fmt.Sprintf("%s [%s]", usage, env))
}

// list is a comma-separated list: blanks around the items and empty items are dropped.
func (e *envDefault) list(p *[]string, name, env string, usage string) {
	set := func(v string) error {
		*p = nil
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				*p = append(*p, item)
			}
		}
		return nil
	}
	if v, ok := e.lookup(env); ok {
		_ = set(v)
	}
	e.fs.Func(name, fmt.Sprintf("%s [%s]", usage, env), set)
}

// jsonValue decodes a JSON document into p, from the environment and then from the flag.
func (e *envDefault) jsonValue(p any, name, env, usage string) {
	decode := func(source, v string) error {
		dec := json.NewDecoder(strings.NewReader(v))
		dec.DisallowUnknownFields()
		if err := dec.Decode(p); err != nil {
			return fmt.Errorf("%s: not the JSON this setting takes: %w", source, err)
		}
		return nil
	}
	if v, ok := e.lookup(env); ok && v != "" {
		if err := decode(env, v); err != nil {
			e.errs = append(e.errs, err)
		}
	}
	e.fs.Func(name, fmt.Sprintf("%s [%s]", usage, env), func(v string) error { return decode("--"+name, v) })
}
