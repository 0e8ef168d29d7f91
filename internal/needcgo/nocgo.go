//go:build !cgo

package needcgo

// This identifier is undefined on purpose: the compiler prints its name.
var _ = kstranded_needs_cgo__librdkafka_is_linked_through_cgo__build_with_CGO_ENABLED_1_and_a_C_compiler_such_as_gcc
