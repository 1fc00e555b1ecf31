// Package law is the law of the data of in-context linear regression
// (docs/math.md, "Conventions", "Data statistics", "The full layer" and
// "Task laws"): tokens x ~ N(0, Λ), the context lengths (ν = E[1/N],
// ν₂ = E[1/N²]), the law of the task vector w — in-context tasks
// w ~ N(0, Ω), K fixed tasks, label noise — and the exact Gaussian
// (Isserlis/Wick) moments of the features of linear attention over it,
// the quadratic form Moments of a population or test loss. Packages flow
// and train both use it.
package law
