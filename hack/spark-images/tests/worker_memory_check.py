# Part of sparkhooks' stand-in Spark image roots (hack/spark-images): the PySpark program Spark's
# Kubernetes integration tests run to check spark.executor.pyspark.memory; our own code.
import resource
import sys

from pyspark.sql import SparkSession

if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("Usage: worker_memory_check.py <expected-address-space-limit-bytes>", file=sys.stderr)
        sys.exit(1)
    spark = SparkSession.builder.appName("PyMemoryTest").getOrCreate()

    def address_space_limit(_):
        limit = resource.getrlimit(resource.RLIMIT_AS)
        print("RLimit is %s" % (limit,))
        return limit[0]

    soft = spark.sparkContext.parallelize([0], 1).map(address_space_limit).collect()[0]
    print("Resource Value is %d" % soft)
    print("PySpark Worker Memory Check is: %s" % (soft == int(sys.argv[1])))
    spark.stop()
