// Part of sparkhooks' stand-in Spark image roots (hack/spark-images): our own driver-only program
// under the name Spark's Kubernetes integration tests run (org.apache.spark.examples.
// DriverSubmissionTest), printing the facts those tests read from the driver log.
package org.apache.spark.examples;

import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.TreeMap;

import com.sun.management.HotSpotDiagnosticMXBean;

/**
 * Starts no SparkContext, so no executor: prints the environment variables whose name contains
 * SPARK_TEST and the system properties whose name contains spark.test as {@code (key,value)},
 * whether the JVM runs the G1 collector as {@code JVM G1GC Flag: <bool>}, then stays alive for
 * {@code args[0]} seconds.
 */
public final class DriverSubmissionTest {
  private DriverSubmissionTest() {}

  public static void main(String[] args) throws InterruptedException {
    if (args.length < 1) {
      System.err.println("Usage: DriverSubmissionTest <seconds-to-sleep>");
      return;
    }
    int seconds = Integer.parseInt(args[0].trim());
    System.out.println("Environment variables containing SPARK_TEST:");
    for (Map.Entry<String, String> e : new TreeMap<>(System.getenv()).entrySet()) {
      if (e.getKey().contains("SPARK_TEST")) {
        System.out.println("(" + e.getKey() + "," + e.getValue() + ")");
      }
    }
    System.out.println("System properties containing spark.test:");
    for (String name : new TreeMap<>(System.getProperties()).keySet().stream().map(Object::toString).toList()) {
      if (name.contains("spark.test")) {
        System.out.println("(" + name + "," + System.getProperty(name) + ")");
      }
    }
    HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
    System.out.println("JVM G1GC Flag: " + hotspot.getVMOption("UseG1GC").getValue());
    for (int i = 1; i < seconds; i++) {
      System.out.println("Alive for " + i + " out of " + seconds + " seconds");
      Thread.sleep(1000);
    }
  }
}
