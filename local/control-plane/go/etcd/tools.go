//go:build tools

// Package tools pins the etcd server command this module builds. It is a
// module of its own because etcd's dependency versions differ from those
// Kubernetes selects.
package tools

import (
	_ "go.etcd.io/etcd/server/v3"
)
