package ode

// interpolate writes the continuous extension of the current step at t.
func (in *Integrator) interpolate(dst []float64, t float64) {
	evalHairer(dst, in.y, in.st.dense(in.t0, in.h), (t-in.t0)/in.h)
}

// hermite sets the Hairer-form vectors of the cubic Hermite interpolant of
// (y₀, f₀) and (y₁, f₁) over a step h: F₁ = y₁ − y₀, F₂ = h f₀ − F₁,
// F₃ = F₁ − h f₁ − F₂ (HNW I, II.6, eq. 6.7).
func hermite(vecs [][]float64, y0, y1, f0, f1 []float64, h float64) {
	f1v, f2v, f3v := vecs[0], vecs[1], vecs[2]
	for i := range y0 {
		d := y1[i] - y0[i]
		f1v[i] = d
		f2v[i] = h*f0[i] - d
		f3v[i] = d - h*f1[i] - f2v[i]
	}
}

// evalHairer evaluates y + θ(F₁ + (1−θ)(F₂ + θ(F₃ + …))) into dst.
func evalHairer(dst, y []float64, f [][]float64, theta float64) {
	th1 := 1 - theta
	last := len(f) - 1
	for i := range dst {
		acc := f[last][i]
		for j := last - 1; j >= 0; j-- {
			if j%2 == 0 {
				acc = f[j][i] + th1*acc
			} else {
				acc = f[j][i] + theta*acc
			}
		}
		dst[i] = y[i] + theta*acc
	}
}
