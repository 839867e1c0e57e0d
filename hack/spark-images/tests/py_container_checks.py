# Part of sparkhooks' stand-in Spark image roots (hack/spark-images): the module Spark's
# Kubernetes integration tests ship with --py-files (spec.deps.pyFiles); our own code.
import os
import sys


def version_check(python_env, major_version):
    """Prints whether the running Python and PYSPARK_PYTHON are the ones the test expects."""
    print("Python runtime version check is: %s" % (sys.version_info[0] == major_version))
    print("Python environment version check is: %s"
          % (os.environ.get("PYSPARK_PYTHON", "python3") == python_env))
