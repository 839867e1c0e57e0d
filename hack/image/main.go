// Command image builds the sparkhooks container image without a Docker engine, and pushes it.
//
//	image build -sparkhooks BIN -kubectl-spark BIN -ca-certificates TAR -tzdata TAR -name REF -epoch SECONDS -out DIR
//	image push -layout DIR -image REF
//
// build writes DIR, an OCI image layout holding the one image, and DIR.tar, the same layout as one
// tar stream (what `ctr images import` and `docker load` read), and prints the manifest's digest.
// The image is the one the Dockerfile describes: the two static binaries over a base like
// distroless's static-debian12:nonroot, made from the files of the Debian packages ca-certificates
// and tzdata (their data tarballs, from dpkg-deb --fsys-tarfile). Every byte depends only on the
// inputs: entries sorted, every time SECONDS (SOURCE_DATE_EPOCH), gzip without a name or time.
//
// push sends the layout's image to the registry REF names, with the credentials of the user's
// Docker configuration (docker login, or a credential helper), and prints its digest there.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: image build|push [flags] (see hack/image/main.go)")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "build":
		err = runBuild(os.Args[2:])
	case "push":
		err = runPush(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q: build or push", os.Args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "image: %v\n", err)
		os.Exit(1)
	}
}

func runBuild(args []string) error {
	var in inputs
	var out string
	fs := flag.NewFlagSet("build", flag.ContinueOnError)
	fs.StringVar(&in.sparkhooks, "sparkhooks", "", "the static sparkhooks binary")
	fs.StringVar(&in.kubectlSpark, "kubectl-spark", "", "the static kubectl-spark binary")
	fs.StringVar(&in.caCertificates, "ca-certificates", "", "the data tarball of Debian's ca-certificates package")
	fs.StringVar(&in.tzdata, "tzdata", "", "the data tarball of Debian's tzdata package")
	fs.StringVar(&in.name, "name", "", "the image's reference, recorded in the layout's index")
	fs.StringVar(&in.arch, "arch", "amd64", "the architecture the binaries are built for")
	fs.Int64Var(&in.epoch, "epoch", -1, "SOURCE_DATE_EPOCH: the time of every file and of the image")
	fs.StringVar(&out, "out", "", "the OCI image layout to write (and <out>.tar)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	for flagName, v := range map[string]string{"sparkhooks": in.sparkhooks, "kubectl-spark": in.kubectlSpark, "ca-certificates": in.caCertificates, "tzdata": in.tzdata, "name": in.name, "out": out} {
		if v == "" {
			return fmt.Errorf("build: -%s is required", flagName)
		}
	}
	if in.epoch < 0 {
		return fmt.Errorf("build: -epoch is required")
	}
	img, err := build(in)
	if err != nil {
		return err
	}
	digest, err := writeLayout(img, in.name, out)
	if err != nil {
		return err
	}
	fmt.Println(digest)
	return nil
}

func runPush(args []string) error {
	var dir, ref string
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	fs.StringVar(&dir, "layout", "", "the OCI image layout image build wrote")
	fs.StringVar(&ref, "image", "", "where to push it: registry/repository:tag")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if dir == "" || ref == "" {
		return fmt.Errorf("push: -layout and -image are required")
	}
	digest, err := push(dir, ref)
	if err != nil {
		return err
	}
	fmt.Printf("%s@%s\n", ref, digest)
	return nil
}
