package law

import "github.com/linattn/linattn/internal/share"

// MulVec sets dst = ZZ·c without forming ZZ (docs/math.md, "The full
// layer without its moment matrices"). The coefficients are spread over
// a tensor Y_ceg symmetric in (c, e) (half of c_{(c,e),g} on each side of
// the diagonal), so that (ZZ c)_{(a,b),f} = G_abf with
//
//	G_abf = Σ_{c,e,g} E[S_ab S_ce x_qf x_qg] Y_ceg
//	      = λ_f (E[Σ̃_ab ⟨Σ̃, Y_f⟩] + 2ν E[Σ̃ Y_f Σ̃]_ab)            Wishart part of (F1)
//	      + ν E[Σ̃_ab] ρ_f + ν (Γ_ab λ_f κ_f + Γ_af λ_b κ_b + Γ_bf λ_a κ_a)   q4 part
//	      + ν₂ (Γ_ab ρ_f + Γ_af ρ_b + Γ_bf ρ_a + 2λ_aλ_bλ_f (Y_abf + Y_afb + Y_bfa))   q6 part (tokens)
//
// where Y_f is the (D+1)×(D+1) slice of Y at g = f, α_g = Σ_c λ_c Y_ccg,
// δ_x = Σ_e λ_e Y_xee, ρ_x = λ_x(α_x + 2δ_x) and κ_g = ⟨E[Σ̃], Y_g⟩. Each
// line costs O(D³) = O(F) operations; nothing allocates on one goroutine.
// The slices of Y and G are shared by o.workers goroutines (SetWorkers),
// each slice computed as on one (the same bits).
func (o *Operator) MulVec(dst, c []float64) {
	o.check("c", c)
	o.check("dst", dst)
	w := o.workers
	if w == 1 {
		o.spread(c, 0, o.d)
		o.scalars()
		o.slices(dst, 0, 0, o.d)
		return
	}
	share.Ranges(o.d, w, 1, func(_, lo, hi int) { o.spread(c, lo, hi) })
	o.scalars()
	share.Ranges(o.d, w, 1, func(w, lo, hi int) { o.slices(dst, w, lo, hi) })
}

// operatorShareMin is the number of entries of Y, (D+1)²D, from which
// MulVec shares its slices among the processors it may take (D ≥ 51).
// With the flow's products (BenchmarkFullEval, deriv, both cores free)
// D = 32 took 0.39 ms shared against 0.36 on one goroutine, D = 64 3.4
// against 4.5 ms.
const operatorShareMin = 1 << 17

// slices computes the slices f0 … f1−1 of G, with worker w's scratch,
// and writes them into dst.
func (o *Operator) slices(dst []float64, w, f0, f1 int) {
	d, d1 := o.d, o.d1
	for f := f0; f < f1; f++ {
		o.wishart(f, o.tb[w])
		o.queryTerms(f)
	}
	for p, ab := range o.pairs {
		a, b := ab[0], ab[1]
		for f := f0; f < f1; f++ {
			dst[p*d+f] = o.g[(f*d1+a)*d1+b]
		}
	}
}

// spread writes the coefficients c into the slices g0 … g1−1 of Y,
// Y[(g·(D+1) + c)·(D+1) + e], symmetric in (c, e).
func (o *Operator) spread(c []float64, g0, g1 int) {
	d, d1, y := o.d, o.d1, o.y
	clear(y[g0*d1*d1 : g1*d1*d1])
	for p, ab := range o.pairs {
		a, b := ab[0], ab[1]
		for g := g0; g < g1; g++ {
			v := c[p*d+g]
			if a == b {
				y[(g*d1+a)*d1+a] += v
				continue
			}
			y[(g*d1+a)*d1+b] += 0.5 * v
			y[(g*d1+b)*d1+a] += 0.5 * v
		}
	}
}

// scalars sets α_g = Σ_{c<D} λ_c Y_ccg, κ_g = ⟨E[Σ̃], Y_g⟩ and
// ρ_x = λ_x(α_x + 2δ_x), δ_x = Σ_{e<D} λ_e Y_xee.
func (o *Operator) scalars() {
	d, d1, y, lam := o.d, o.d1, o.y, o.lam
	for g := 0; g < d; g++ {
		yg := y[g*d1*d1 : (g+1)*d1*d1]
		var a, k float64
		for c := 0; c < d; c++ {
			a += lam[c] * yg[c*d1+c]
			k += o.e1[c] * yg[c*d1+d]
		}
		o.alpha[g] = a
		o.kappa[g] = a + 2*k + o.es*yg[d*d1+d]
	}
	for x := 0; x < d; x++ {
		var s float64
		for e := 0; e < d; e++ {
			s += lam[e] * y[(e*d1+x)*d1+e]
		}
		o.rho[x] = lam[x] * (o.alpha[x] + 2*s)
	}
}

// wishart writes G_f = λ_f (E[Σ̃_ab ⟨Σ̃, Y_f⟩] + 2ν E[Σ̃ Y_f Σ̃]) into the
// slice f of G: with Y_f = [[A, β], [βᵀ, γ]] and Σ̃ = [[Λ, u], [uᵀ, s]],
//
//	E[Σ̃ Y Σ̃] = [[ΛAΛ + Λβe₁ᵀ + e₁βᵀΛ + γ l₂,  ΛAe₁ + es Λβ + l₂β + γ l₃],
//	            [·,                             ⟨A, l₂⟩ + 2 l₃ᵀβ + γ es₂]],
//
// ⟨Σ̃, Y⟩ = α + 2uᵀβ + sγ, whose products with Σ̃'s entries average to
// Λ(α + 2e₁ᵀβ + es γ), e₁α + 2l₂β + γl₃ and es α + 2l₃ᵀβ + es₂γ. O(D²).
func (o *Operator) wishart(f int, tb []float64) {
	d, d1, lam, nu := o.d, o.d1, o.lam, o.nu
	yf, gf := o.y[f*d1*d1:(f+1)*d1*d1], o.g[f*d1*d1:(f+1)*d1*d1]
	alpha, gam := o.alpha[f], yf[d*d1+d]
	// tb = l₂β, and the scalars e₁ᵀβ, l₃ᵀβ, ⟨A, l₂⟩.
	var e1b, l3b, al2 float64
	for i := 0; i < d; i++ {
		var s float64
		row := o.l2[i*d : (i+1)*d]
		for k, l := range row {
			s += l * yf[k*d1+d]
			al2 += yf[i*d1+k] * l
		}
		tb[i] = s
		e1b += o.e1[i] * yf[i*d1+d]
		l3b += o.l3[i] * yf[i*d1+d]
	}
	lf := lam[f]
	pa := alpha + 2*e1b + o.es*gam
	for a := 0; a < d; a++ {
		ya, ga := yf[a*d1:(a+1)*d1], gf[a*d1:(a+1)*d1]
		la, ba, ea := lam[a], ya[d], o.e1[a]
		l2a := o.l2[a*d : (a+1)*d]
		var ae1 float64
		for b := 0; b < d; b++ {
			ae1 += ya[b] * o.e1[b]
			pb := la*ya[b]*lam[b] + la*ba*o.e1[b] + ea*yf[b*d1+d]*lam[b] + gam*l2a[b]
			ga[b] = lf * 2 * nu * pb
		}
		ga[a] += lf * la * pa
		paD := ea*alpha + 2*tb[a] + gam*o.l3[a]
		pbD := la*ae1 + o.es*la*ba + tb[a] + gam*o.l3[a]
		v := lf * (paD + 2*nu*pbD)
		ga[d], gf[d*d1+a] = v, v
	}
	paDD := o.es*alpha + 2*l3b + o.es2*gam
	pbDD := al2 + 2*l3b + gam*o.es2
	gf[d*d1+d] = lf * (paDD + 2*nu*pbDD)
}

// queryTerms adds to the slice f of G the terms of (F1) with the query's
// fourth and sixth moments: ν E[Σ̃_ab] ρ_f + ν(Γ_ab λ_f κ_f + Γ_af λ_b κ_b
// + Γ_bf λ_a κ_a) and, on S's token block, ν₂(Γ_ab ρ_f + Γ_af ρ_b
// + Γ_bf ρ_a + 2λ_aλ_bλ_f(Y_abf + Y_afb + Y_bfa)). O(D²).
func (o *Operator) queryTerms(f int) {
	d, d1, lam, nu, nu2 := o.d, o.d1, o.lam, o.nu, o.nu2
	y := o.y
	gf := o.g[f*d1*d1 : (f+1)*d1*d1]
	lf, rf, kf := lam[f], o.rho[f], o.kappa[f]
	// ν E[Σ̃_ab] ρ_f: Λ on the tokens, e₁ with one label, es on (D, D).
	for a := 0; a < d; a++ {
		gf[a*d1+a] += nu * lam[a] * rf
		v := nu * o.e1[a] * rf
		gf[a*d1+d] += v
		gf[d*d1+a] += v
	}
	gf[d*d1+d] += nu * o.es * rf
	// Γ_ab λ_f κ_f, and ν₂ Γ_ab ρ_f.
	for a := 0; a < d; a++ {
		gf[a*d1+a] += lam[a] * (nu*lf*kf + nu2*rf)
	}
	// Γ_af λ_b κ_b (a = f) and Γ_bf λ_a κ_a (b = f), with ν₂'s ρ.
	for b := 0; b < d; b++ {
		v := lf * (nu*lam[b]*o.kappa[b] + nu2*o.rho[b])
		gf[f*d1+b] += v
		gf[b*d1+f] += v
	}
	if nu2 == 0 {
		return
	}
	c := 2 * nu2 * lf
	for a := 0; a < d; a++ {
		ca := c * lam[a]
		ya := y[(a*d1)*d1:] // Y_{b,f,a} = ya[b*d1+f]
		for b := 0; b < d; b++ {
			gf[a*d1+b] += ca * lam[b] * (y[(f*d1+a)*d1+b] + y[(b*d1+a)*d1+f] + ya[b*d1+f])
		}
	}
}

// SetWorkers sets the processors MulVec may share its work among: procs,
// or for 0 (the default) those Go may use (runtime.GOMAXPROCS, at most
// 8). It shares its slices among all of them from operatorShareMin
// entries of Y (D ≥ 51), and computes on one goroutine below; the results
// are the same bit for bit.
func (o *Operator) SetWorkers(procs int) {
	o.share(share.Workers((o.d+1)*(o.d+1)*o.d, operatorShareMin, procs))
}

// share sets the number of goroutines that share MulVec, w ≥ 1, with
// their scratch.
func (o *Operator) share(w int) {
	o.workers = max(1, w)
	for len(o.tb) < o.workers {
		o.tb = append(o.tb, make([]float64, o.d))
	}
}
