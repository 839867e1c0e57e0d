package children

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// Spark's memory defaults.
const (
	defaultHeapMiB        = 1024 // spark.driver.memory / spark.executor.memory: 1g
	defaultMinOverheadMiB = 384
	jvmOverheadFactor     = "0.1"
	nonJVMOverheadFactor  = "0.4"
)

// containerMemoryMiB is the memory request and limit Spark puts on a driver container: the heap
// plus the overhead, by the rule of BasicDriverFeatureStep.
//
//	overhead = spark.driver.memoryOverhead, or
//	           max(int(factor × heap), spark.driver.minMemoryOverhead (4.0+) or 384 MiB)
//	factor   = spark.driver.memoryOverheadFactor, or spark.kubernetes.memoryOverheadFactor
//	           (which the builder always writes: 0.1 for the JVM, 0.4 for Python and R)
func containerMemoryMiB(conf properties, role string, v sparkVersion) (int64, error) {
	heap, err := miBProperty(conf, "spark."+role+".memory", defaultHeapMiB)
	if err != nil {
		return 0, err
	}
	if s := conf.get("spark." + role + ".memoryOverhead"); s != "" {
		overhead, err := parseMiB(s)
		if err != nil {
			return 0, fmt.Errorf("spark.%s.memoryOverhead: %w", role, err)
		}
		return heap + overhead, nil
	}
	factorKey := "spark.kubernetes.memoryOverheadFactor"
	if v.atLeast(3, 3) && conf.get("spark."+role+".memoryOverheadFactor") != "" {
		factorKey = "spark." + role + ".memoryOverheadFactor"
	}
	factor, err := strconv.ParseFloat(strings.TrimSpace(conf.get(factorKey)), 64)
	if err != nil {
		return 0, fmt.Errorf("%s must be a number, got %q", factorKey, conf.get(factorKey))
	}
	minOverhead := int64(defaultMinOverheadMiB)
	if v.atLeast(4, 0) {
		if minOverhead, err = miBProperty(conf, "spark."+role+".minMemoryOverhead", defaultMinOverheadMiB); err != nil {
			return 0, err
		}
	}
	// Spark truncates (Scala's toInt), so 4g gives 409 MiB of overhead, not 410.
	overhead := max(int64(factor*float64(heap)), minOverhead)
	return heap + overhead, nil
}

func miBProperty(conf properties, key string, def int64) (int64, error) {
	s := conf.get(key)
	if s == "" {
		return def, nil
	}
	n, err := parseMiB(s)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", key, err)
	}
	return n, nil
}

// parseMiB reads a Spark memory size in whole MiB, rounding down as Spark does.
func parseMiB(s string) (int64, error) {
	b, err := v1beta2.ParseSparkMemory(s)
	if err != nil {
		return 0, err
	}
	return b / v1beta2.MiB, nil
}
