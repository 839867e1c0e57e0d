# Part of sparkhooks' stand-in Spark image roots (hack/spark-images): the PySpark program Spark's
# Kubernetes integration tests run to check --py-files (spec.deps.pyFiles); our own code.
import sys

from pyspark.sql import SparkSession
from pyspark.sql.types import StringType

if __name__ == "__main__":
    if len(sys.argv) < 2:
        print("Usage: pyfiles.py <python-environment>", file=sys.stderr)
        sys.exit(1)
    spark = SparkSession.builder.appName("PyFilesTest").getOrCreate()
    # Shipped with the application, not in the image's Python path.
    from py_container_checks import version_check

    env = sys.argv[1]
    version_check(env, 2 if env == "python" else 3)

    def worker_version():
        return "%d.%d" % sys.version_info[:2]

    spark.udf.register("worker_version", worker_version, StringType())
    executor = spark.sql("SELECT worker_version()").collect()[0][0]
    print("Python runtime version check for executor is: %s" % (executor == worker_version()))
    spark.stop()
