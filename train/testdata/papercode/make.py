"""Writes the fixtures of train's TestPaperCode: the paper's own code
(github.com/yedizhang/linattn-icl, net.py, data.py and train.py, which
this script imports from a checkout and does not copy) trained by
full-batch gradient descent in float32 on its own data, from its own
initial weights and from linattn's, for each case of cases.json.

    python3 make.py CHECKOUT LINATTN

CHECKOUT is a checkout of linattn-icl (commit 9a481d5 was used), LINATTN
a linattn binary (go build ./cmd/linattn), which draws linattn's initial
weights. It writes data.npz (the sequences of the first case's seed,
shared by all: their draws do not depend on the model) and CASE.npz for
each case. torch 1.13 and numpy from Debian (python3-torch).

The weights of the paper's code map to linattn's (docs/math.md, "The
paper's code"): its attention sums over the context without the 1/N of
the paper's definition, so its prediction at weights θ is linattn's at
c·θ with c = √N (merged: two factors) or N^(1/3) (separate: three);
softmax attention normalizes its weights and c = 1. Blocks of its
matrices that do not enter the query's prediction get no gradient and are
left as drawn.
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def scale(case):
    if case['softmax']:
        return 1.0
    n = case['N']
    return n ** 0.5 if case['model'] == 'attnM' else n ** (1 / 3)


def their_args(case, init):
    a = ['--model', case['model'], '--head_num', str(case['H']), '--rank', str(case['R']),
         '--in_dim', str(case['D']), '--seq_len', str(case['N'] + 1), '--trainset_size', str(case['P']),
         '--seed', str(case['seed']), '--init', str(init), '--lr', str(case['lr']), '--epoch', str(case['epochs'])]
    return a + (['--softmax'] if case['softmax'] else [])


def setup(case):
    """Their train.py's main up to the network: the same random draws in
    the same order (data, then weights)."""
    import torch
    from config import config
    from data import gen_dataset
    from train import creat_network
    sys.argv = ['train.py'] + their_args(case, case['init'])  # config() parses sys.argv when built
    args = config().parse_args(sys.argv[1:])
    torch.manual_seed(args.seed)
    np.random.seed(args.seed)
    data = gen_dataset(args)
    return args, data, creat_network(args)


def to_ours(model, case):
    """linattn's weights (the -init layout, full layer) of their model."""
    D, H, R, c = case['D'], case['H'], case['R'], scale(case)
    W = {k: v.detach().double().numpy() for k, v in model.state_dict().items()}
    v, vx = np.zeros(H), np.zeros((H, D))
    if case['model'] == 'attnM':
        kq, val = W['kq.weight'], W['value.weight']
        U, uy = np.zeros((H, D, D)), np.zeros((H, D))
        for h in range(H):
            r0 = h * (D + 1)
            U[h], uy[h] = kq[r0:r0 + D, :D].T, kq[r0:r0 + D, D]
            v[h], vx[h] = val[r0 + D, D], val[r0 + D, :D]
        return dict(v=c * v, U=c * U, v_x=c * vx, u_y=c * uy)
    k, q, val = W['key.weight'], W['query.weight'], W['value.weight']
    K, Q, ky = np.zeros((H, R, D)), np.zeros((H, R, D)), np.zeros((H, R))
    for h in range(H):
        for r in range(R):
            K[h, r], ky[h, r], Q[h, r] = k[h * R + r, :D], k[h * R + r, D], q[h * R + r, :D]
        v[h], vx[h] = val[h * (D + 1) + D, D], val[h * (D + 1) + D, :D]
    return dict(v=c * v, K=c * K, Q=c * Q, v_x=c * vx, k_y=c * ky)


def from_ours(model, w, case):
    """Sets the blocks of model that enter the query's prediction to
    linattn's weights w."""
    import torch
    D, H, R, c = case['D'], case['H'], case['R'], scale(case)
    sd = {k: t.clone() for k, t in model.state_dict().items()}
    get = lambda name, shape: np.asarray(w[name]).reshape(shape) / c if name in w else np.zeros(shape)
    v, vx = get('v', (H,)), get('v_x', (H, D))
    t = lambda a: torch.tensor(a, dtype=torch.float32)
    if case['model'] == 'attnM':
        U, uy = get('U', (H, D, D)), get('u_y', (H, D))
        for h in range(H):
            r0 = h * (D + 1)
            sd['kq.weight'][r0:r0 + D, :D], sd['kq.weight'][r0:r0 + D, D] = t(U[h].T), t(uy[h])
            sd['value.weight'][r0 + D, D], sd['value.weight'][r0 + D, :D] = float(v[h]), t(vx[h])
    else:
        K, Q, ky = get('K', (H, R, D)), get('Q', (H, R, D)), get('k_y', (H, R))
        for h in range(H):
            for r in range(R):
                sd['key.weight'][h * R + r, :D], sd['key.weight'][h * R + r, D] = t(K[h, r]), float(ky[h, r])
                sd['query.weight'][h * R + r, :D] = t(Q[h, r])
            sd['value.weight'][h * (D + 1) + D, D], sd['value.weight'][h * (D + 1) + D, :D] = float(v[h]), t(vx[h])
    model.load_state_dict(sd)


def descend(model, data, args):
    """Their train(): full-batch SGD, the loss before every step."""
    import torch
    from train import compute_loss
    opt = torch.optim.SGD(model.parameters(), lr=args.lr)
    out = np.zeros(args.epoch)
    for k in range(args.epoch):
        opt.zero_grad()
        loss = compute_loss(model, data, args)
        out[k] = loss.item()
        loss.backward()
        opt.step()
    return out


def linattn_init(binary, case):
    """linattn's initial weights (the paper's initialization, -winit and
    -seed), read back from the first state of a run."""
    model = 'merged' if case['model'] == 'attnM' else 'separate'
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, 'init.npz')
        cmd = [binary, 'run', '-q', '-model', model, '-H', str(case['H']), '-white', '0.25', '-D', str(case['D']), '-eigvecs', 'identity',
               '-N', str(case['N']), '-winit', str(case['winit']), '-seed', str(case['linattn_seed']),
               '-T', '1e-9', '-samples', '2', '-grid', 'lin', '-o', out]
        if model == 'separate':
            cmd += ['-R', str(case['R'])]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        run = np.load(out)
        names = ['v', 'U'] if model == 'merged' else ['v', 'K', 'Q']
        return {n: run[n][0] for n in names}


def main():
    checkout, binary = sys.argv[1], os.path.abspath(sys.argv[2])
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, checkout)
    import torch
    torch.set_num_threads(1)
    cases = json.load(open(os.path.join(here, 'cases.json')))
    data0 = None
    for case in cases:
        args, data, model = setup(case)
        x, y = data['x'].numpy().astype(np.float64), data['y'][:, :, case['D']].numpy().astype(np.float64)
        if data0 is None:
            data0 = (x, y)
            np.savez_compressed(os.path.join(here, 'data.npz'), x=x, y=y)
        elif not (np.array_equal(x, data0[0]) and np.array_equal(y, data0[1])):
            sys.exit(case['name'] + ': the data differ from the first case\'s')
        theirs = to_ours(model, case)
        loss_theirs = descend(model, data, args)
        _, data, model = setup(case)
        ours = linattn_init(binary, case)
        from_ours(model, ours, case)
        loss_ours = descend(model, data, args)
        out = {'loss_theirs': loss_theirs, 'loss_ours': loss_ours}
        out.update({'theirs_' + k: a for k, a in theirs.items()})
        out.update({'ours_' + k: a for k, a in ours.items()})
        np.savez_compressed(os.path.join(here, case['name'] + '.npz'), **out)
        print(case['name'], 'loss', loss_theirs[0], '->', loss_theirs[-1], '; from linattn\'s start', loss_ours[0], '->', loss_ours[-1])


if __name__ == '__main__':
    main()
