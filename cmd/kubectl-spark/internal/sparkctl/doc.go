// Package sparkctl is the operator's command-line tool: the commands of the kubectl plugin
// kubectl-spark for SparkApplications, ScheduledSparkApplications and SparkConnects. It talks to the API server with client-go only, as a user would with kubectl:
// it never calls the hooks, and every object it makes is one the hooks would accept as made by
// the user (create -f) or by themselves (create --from, a run of a schedule).
//
// Everything from outside comes in through Env (streams, clock, environment, clients, object
// stores), so each command is tested against client-go's fake clientsets.
package sparkctl
