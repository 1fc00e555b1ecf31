package train

// stackTokens evaluates a stack of L reduced linear-attention layers on a
// residual stream token by token, for one prediction from n context
// tokens (docs/training.md, "Depth"): every token's label slot, the
// query's starting at 0, gains at layer ℓ
//
//	s_i Σ_h v_h (1/n) Σ_{j<n} y_j (x_jᵀ U_h x_i),   s_i = −1 on the context, +1 on the query,
//
// the keys ranging over the context alone; the token slots x never change,
// and ŷ is the query's label slot after the last layer. Each attention
// sum is formed by associativity, (1/n) Σ_j y_j x_jᵀ M x_i = x_iᵀ A b
// with b = (1/n) Σ_j y_j x_j and A = Mᵀ, and back-propagated by hand. It
// is independent of the population's moments, so the Monte Carlo tests
// hold the exact flow against it.
type stackTokens struct {
	d, layers int
	y         []float64 // the tokens' label slots, context then query
	b, a      []float64 // b_ℓ (layers × D) and a = A_ℓ b_ℓ
	ybar      []float64
	abar      []float64
	bbar      []float64
}

func newStackTokens(d, layers, tokens int) *stackTokens {
	return &stackTokens{d: d, layers: layers, y: make([]float64, tokens), b: make([]float64, layers*d), a: make([]float64, d),
		ybar: make([]float64, tokens), abar: make([]float64, d), bbar: make([]float64, d)}
}

// prefix returns weight·(y − ŷ)² for the prediction of token n of q from
// the n tokens before it through the layers' preconditioners as (A_ℓ, row-major D×D),
// and with gm not nil adds its gradient with respect to each layer's map
// M_ℓ = A_ℓᵀ to gm[ℓ].
func (st *stackTokens) prefix(as, gm [][]float64, q *sequence, n int, weight float64) float64 {
	d, d1 := st.d, st.d+1
	x := func(j int) []float64 { return q.tok[j*d1 : j*d1+d] }
	y := st.y[:n+1]
	for j := 0; j < n; j++ {
		y[j] = q.tok[j*d1+d]
	}
	y[n] = 0
	inv := 1 / float64(n)
	for l, A := range as {
		b := st.b[l*d : (l+1)*d]
		clear(b)
		for j := 0; j < n; j++ {
			axpy(b, y[j]*inv, x(j))
		}
		matVec(st.a, A, b, d)
		for j := 0; j < n; j++ {
			y[j] -= inner(x(j), st.a)
		}
		y[n] += inner(x(n), st.a)
	}
	r := q.yt[n] - y[n]
	if gm != nil {
		st.backward(as, gm, q, n, -2*weight*r)
	}
	return weight * r * r
}

// backward propagates ∂loss/∂ŷ = g through the layers in reverse: with
// ā = Σ_j s_j ȳ_j x_j, Ā_ℓ += ā b_ℓᵀ (so ∂/∂M_ℓ += b_ℓ āᵀ), b̄ = A_ℓᵀ ā
// and ȳ_j += x_j·b̄/n for the context's label slots.
func (st *stackTokens) backward(as, gm [][]float64, q *sequence, n int, g float64) {
	d, d1 := st.d, st.d+1
	x := func(j int) []float64 { return q.tok[j*d1 : j*d1+d] }
	ybar := st.ybar[:n+1]
	clear(ybar)
	ybar[n] = g
	inv := 1 / float64(n)
	for l := len(as) - 1; l >= 0; l-- {
		b, abar := st.b[l*d:(l+1)*d], st.abar
		clear(abar)
		for j := 0; j < n; j++ {
			axpy(abar, -ybar[j], x(j))
		}
		axpy(abar, ybar[n], x(n))
		gml := gm[l]
		for i, bi := range b {
			axpy(gml[i*d:(i+1)*d], bi, abar)
		}
		matTVec(st.bbar, as[l], abar, d)
		for j := 0; j < n; j++ {
			ybar[j] += inv * inner(x(j), st.bbar)
		}
	}
}

func axpy(dst []float64, c float64, x []float64) {
	x = x[:len(dst)]
	for i, v := range x {
		dst[i] += c * v
	}
}

func inner(x, y []float64) float64 {
	y = y[:len(x)]
	var s float64
	for i, v := range x {
		s += v * y[i]
	}
	return s
}

// matVec sets dst = A x for row-major A (d×d).
func matVec(dst, a, x []float64, d int) {
	for i := range dst[:d] {
		dst[i] = inner(a[i*d:(i+1)*d], x)
	}
}

// matTVec sets dst = Aᵀ x.
func matTVec(dst, a, x []float64, d int) {
	clear(dst[:d])
	for i, xi := range x[:d] {
		axpy(dst[:d], xi, a[i*d:(i+1)*d])
	}
}
