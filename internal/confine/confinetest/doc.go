// Package confinetest holds what the confinement race tests share: a
// swapper that keeps exchanging two names (Linux only, where renameat2
// exchanges them atomically).
package confinetest
