// Part of sparkhooks' stand-in Spark image roots (hack/spark-images): what the ported Spark
// integration tests read inside pods with kubectl exec (env, cat, ls, df), which the process
// kubelet does not serve, printed by the application itself from the driver and every executor.
package io.sparkhooks.e2e;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.apache.spark.SparkEnv;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.SparkSession;

/**
 * Each argument is a probe: {@code env:NAME} (the variable's value), {@code file:PATH} (the
 * file's content), {@code ls:DIR} (its entries but hidden ones), {@code fs:PATH} (the type and source of the
 * filesystem PATH is on, from /proc/self/mountinfo); {@code $SPARK_LOCAL_DIRS} in a path is the
 * first local directory. Prints {@code <where> <probe>=<answer>} for the driver and, unless the
 * master is local, for every executor, where is {@code driver} or {@code executor <id>}.
 */
public final class PodProbe {
  private PodProbe() {}

  public static void main(String[] args) {
    SparkSession spark = SparkSession.builder().appName("Pod Probe").getOrCreate();
    try {
      for (String line : probe("driver", args)) {
        System.out.println(line);
      }
      JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
      if (!jsc.isLocal()) {
        int executors = Integer.parseInt(jsc.getConf().get("spark.executor.instances", "1"));
        int tasks = Math.max(4 * executors, 4);
        List<Integer> seeds = new ArrayList<>();
        for (int i = 0; i < tasks; i++) {
          seeds.add(i);
        }
        // Many small tasks so that every executor runs some; the driver prints each answer once.
        TreeSet<String> answers = new TreeSet<>(jsc.parallelize(seeds, tasks)
            .flatMap(i -> probe("executor " + SparkEnv.get().executorId(), args).iterator())
            .collect());
        for (String line : answers) {
          System.out.println(line);
        }
      }
    } finally {
      spark.stop();
    }
  }

  static List<String> probe(String where, String[] probes) {
    List<String> out = new ArrayList<>();
    for (String p : probes) {
      int colon = p.indexOf(':');
      String kind = colon < 0 ? p : p.substring(0, colon);
      String arg = colon < 0 ? "" : expand(p.substring(colon + 1));
      String answer;
      try {
        answer = switch (kind) {
          case "env" -> String.valueOf(System.getenv(arg));
          case "file" -> Files.readString(Path.of(arg)).trim();
          case "ls" -> ls(arg);
          case "fs" -> filesystem(arg);
          default -> "unknown probe";
        };
      } catch (IOException | RuntimeException e) {
        answer = "error " + e;
      }
      out.add(where + " " + kind + " " + arg + "=" + answer);
    }
    return out;
  }

  static String expand(String path) {
    String dirs = System.getenv("SPARK_LOCAL_DIRS");
    String first = dirs == null ? "" : dirs.split(",")[0];
    return path.replace("$SPARK_LOCAL_DIRS", first);
  }

  static String ls(String dir) throws IOException {
    try (Stream<Path> entries = Files.list(Path.of(dir))) {
      // Hidden entries left out, as ls does: a kubelet writes a secret volume atomically through
      // ..data and a timestamped ..<date> directory beside the keys.
      return String.join(",", entries.map(e -> e.getFileName().toString()).filter(n -> !n.startsWith(".")).sorted().toList());
    }
  }

  /** The deepest mount containing path: "<fstype> <source>", as df's type and device say. */
  static String filesystem(String path) throws IOException {
    String real = Path.of(path).toRealPath().toString();
    String best = null;
    String answer = "no mount";
    for (String line : Files.readAllLines(Path.of("/proc/self/mountinfo"))) {
      String[] halves = line.split(" - ", 2);
      String[] fields = halves[0].split(" ");
      String mountPoint = fields[4].replace("\\040", " ");
      boolean contains = real.equals(mountPoint) || mountPoint.equals("/")
          || real.startsWith(mountPoint.endsWith("/") ? mountPoint : mountPoint + "/");
      if (contains && (best == null || mountPoint.length() >= best.length())) {
        String[] tail = halves[1].split(" ");
        best = mountPoint;
        answer = tail[0] + " " + tail[1];
      }
    }
    return answer;
  }
}
