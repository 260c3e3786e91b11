//go:build tools

// Package tools pins the Kubernetes control-plane commands this module builds.
// The build tag keeps it out of every normal build; it exists so that
// `go mod tidy` records (and go.sum verifies) everything those commands need.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
