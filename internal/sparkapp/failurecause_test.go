package sparkapp

import (
	"strings"
	"testing"
)

// The logs are the ends of real drivers' logs (Spark 3.5.3 and 4.0.1 on the process kubelet).
func TestFailureCause(t *testing.T) {
	for _, tc := range []struct {
		name, msg, want string
	}{
		{"empty", "", ""},
		{"written by the application", "input bucket s3a://in is empty", "input bucket s3a://in is empty"},
		{"spark-submit cannot load the main class", `Files local:///opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar from /opt/spark/examples/jars/spark-examples_2.12-3.5.3.jar to /opt/spark/work-dir/spark-examples_2.12-3.5.3.jar
26/11/24 13:23:03 WARN NativeCodeLoader: Unable to load native-hadoop library for your platform... using builtin-java classes where applicable
Error: Failed to load class org.apache.spark.examples.NoSuchClass.
26/11/24 13:23:03 INFO ShutdownHookManager: Shutdown hook called
26/11/24 13:23:03 INFO ShutdownHookManager: Deleting directory /tmp/spark-9d2c29a6-eeec-412d-818b-9b9f681aad71`,
			"Failed to load class org.apache.spark.examples.NoSuchClass."},
		{"an exception thrown by main", `26/11/24 13:30:01 INFO SparkContext: Running Spark version 3.5.3
Exception in thread "main" java.lang.NumberFormatException: For input string: "abc"
	at java.base/java.lang.NumberFormatException.forInputString(NumberFormatException.java:67)
	at java.base/java.lang.Integer.parseInt(Integer.java:668)
	at org.apache.spark.examples.SparkPi$.main(SparkPi.scala:31)
26/11/24 13:30:02 INFO ShutdownHookManager: Shutdown hook called`,
			`java.lang.NumberFormatException: For input string: "abc"`},
		{"an exception with its root cause", `Exception in thread "main" org.apache.spark.SparkException: Job aborted.
	at org.apache.spark.scheduler.DAGScheduler.failJobAndIndependentStages(DAGScheduler.scala:2856)
Caused by: org.apache.spark.SparkException: Task failed
	at org.apache.spark.scheduler.Task.run(Task.scala:141)
Caused by: java.io.FileNotFoundException: /data/in.csv (No such file or directory)
	at java.base/java.io.FileInputStream.open0(Native Method)
26/11/24 13:30:02 INFO ShutdownHookManager: Shutdown hook called`,
			"org.apache.spark.SparkException: Job aborted.; caused by java.io.FileNotFoundException: /data/in.csv (No such file or directory)"},
		{"a Python traceback", `26/11/24 13:40:00 INFO SparkContext: Running Spark version 4.0.1
Traceback (most recent call last):
  File "/opt/spark/examples/src/main/python/pi.py", line 30, in <module>
    partitions = int(sys.argv[1]) if len(sys.argv) > 1 else 2
ValueError: invalid literal for int() with base 10: 'abc'
26/11/24 13:40:01 INFO ShutdownHookManager: Shutdown hook called`,
			"ValueError: invalid literal for int() with base 10: 'abc'"},
		{"only Spark's own error lines", `26/11/24 13:50:00 INFO SparkContext: Running Spark version 3.5.3
26/11/24 13:50:01 ERROR SparkContext: Error initializing SparkContext.
26/11/24 13:50:02 INFO ShutdownHookManager: Shutdown hook called`,
			"SparkContext: Error initializing SparkContext."},
		{"a log tail that names nothing", `26/11/24 13:50:02 INFO ShutdownHookManager: Shutdown hook called
26/11/24 13:50:02 INFO ShutdownHookManager: Deleting directory /tmp/spark-1`, ""},
		{"a JVM OutOfMemoryError through py4j, above its stack trace", `Traceback (most recent call last):
  File "/opt/spark/work-dir/job.py", line 12, in <module>
    df.count()
  File "/opt/spark/python/lib/pyspark.zip/pyspark/sql/dataframe.py", line 1234, in count
py4j.protocol.Py4JJavaError: An error occurred while calling o312.count.
: java.lang.OutOfMemoryError: Java heap space
	at java.base/java.util.Arrays.copyOf(Arrays.java:3537)
	at org.apache.spark.sql.Dataset.count(Dataset.scala:3615)
	at java.base/java.lang.Thread.run(Thread.java:840)

26/11/24 14:00:01 INFO SparkContext: Invoking stop() from shutdown hook
26/11/24 14:00:01 INFO ShutdownHookManager: Shutdown hook called`,
			"py4j.protocol.Py4JJavaError: An error occurred while calling o312.count.; caused by java.lang.OutOfMemoryError: Java heap space"},
		{"a JVM OutOfMemoryError in a Scala driver", `Exception in thread "main" java.lang.OutOfMemoryError: Java heap space
	at scala.collection.mutable.ArrayBuffer.ensureSize(ArrayBuffer.scala:58)
26/11/24 14:05:00 ERROR Utils: Uncaught exception in thread shutdown-hook-0
26/11/24 14:05:00 INFO ShutdownHookManager: Shutdown hook called`,
			"java.lang.OutOfMemoryError: Java heap space"},
		{"an OutOfMemoryError as the root cause", `Exception in thread "main" org.apache.spark.SparkException: Job aborted due to stage failure
Caused by: java.lang.OutOfMemoryError: GC overhead limit exceeded
	at java.base/java.lang.OutOfMemoryError.<init>(OutOfMemoryError.java:1)`,
			"java.lang.OutOfMemoryError: GC overhead limit exceeded"},
		{"a Java exception through py4j", `Traceback (most recent call last):
  File "/opt/spark/work-dir/job.py", line 5, in <module>
py4j.protocol.Py4JJavaError: An error occurred while calling o41.load.
: org.apache.spark.sql.AnalysisException: [PATH_NOT_FOUND] Path does not exist: file:/data/in.
	at org.apache.spark.sql.errors.QueryCompilationErrors$.dataPathNotExistError(QueryCompilationErrors.scala:1500)`,
			"py4j.protocol.Py4JJavaError: An error occurred while calling o41.load.; caused by org.apache.spark.sql.AnalysisException: [PATH_NOT_FOUND] Path does not exist: file:/data/in."},
		{"bounded", "Exception in thread \"main\" java.lang.IllegalStateException: " + strings.Repeat("x", 2000),
			"java.lang.IllegalStateException: " + strings.Repeat("x", maxCause-len("java.lang.IllegalStateException: ")) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := failureCause(tc.msg); got != tc.want {
				t.Errorf("failureCause:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestExitExceptionCause(t *testing.T) {
	for _, tc := range []struct {
		name, annotation, want string
	}{
		{"no annotation", "", ""},
		{"an exception alone", "java.lang.NumberFormatException: For input string: \"abc\"\n\tat java.base/java.lang.Integer.parseInt(Integer.java:668)\n",
			"java.lang.NumberFormatException: For input string: \"abc\""},
		{"the root cause is the last Caused by", "org.apache.spark.SparkException: Job aborted.\n\tat x\nCaused by: org.apache.spark.SparkException: Task failed\n\tat y\nCaused by: java.io.IOException: disk full\n\tat z",
			"org.apache.spark.SparkException: Job aborted.; caused by java.io.IOException: disk full"},
		{"leading blank lines", "\n\n  java.lang.IllegalStateException: boom\n", "java.lang.IllegalStateException: boom"},
		{"bounded on a character boundary", "java.lang.IllegalStateException: " + strings.Repeat("é", maxCause),
			"java.lang.IllegalStateException: " + strings.Repeat("é", (maxCause-len("java.lang.IllegalStateException: "))/2) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := exitExceptionCause(tc.annotation); got != tc.want {
				t.Errorf("exitExceptionCause:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}
