// Package staging uploads an application's local dependencies to object stores for sparkctl's
// create --upload-to: S3 and S3-compatible stores through the AWS SDK for Go v2, Google Cloud
// Storage through cloud.google.com/go/storage, each with its SDK's standard credentials and
// settings from the environment. Clients are made on first use, so a command that stages nothing
// needs no credentials. Only kubectl-spark links this package: the SDKs stay out of the server.
// Each store is a package of its own, so a binary that needs one links one SDK.
package staging

import (
	"github.com/sparkhooks/sparkhooks/cmd/kubectl-spark/internal/sparkctl"
	"github.com/sparkhooks/sparkhooks/cmd/kubectl-spark/internal/sparkctl/staging/gcs"
	"github.com/sparkhooks/sparkhooks/cmd/kubectl-spark/internal/sparkctl/staging/s3"
)

// Stagers are the object stores by the scheme of --upload-to.
func Stagers() map[string]sparkctl.Stager {
	return map[string]sparkctl.Stager{"s3": &s3.Stager{}, "gs": &gcs.Stager{}}
}
