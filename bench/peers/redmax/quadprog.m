function [x, fval, exitflag, output, lambda] = quadprog(H, f, A, b, Aeq, beq, lb, ub, x0, opts)
  % Shim of MATLAB's quadprog for Octave: exact active-set solves (__qp__); a primal problem
  % with general constraints is solved through its bound-constrained dual.
  n = numel(f); f = f(:);
  if nargin < 3, A = []; end
  if nargin < 4, b = []; end
  if nargin < 5, Aeq = []; end
  if nargin < 6, beq = []; end
  if nargin < 7, lb = []; end
  if nargin < 8, ub = []; end
  lambda = struct('ineqlin', zeros(size(A,1),1), 'eqlin', zeros(size(Aeq,1),1), 'lower', [], 'upper', []);
  if isempty(A) && isempty(Aeq)
    x = bounded_qp(H, f, lb, ub, n);
  else
    G = [A; Aeq]; d = [b(:); beq(:)];
    ni = size(A,1); ne = size(Aeq,1);
    HiGt = H \ G'; Hif = H \ f;
    Q = G*HiGt; Q = 0.5*(Q+Q');
    c = G*Hif + d;
    l = bounded_qp(Q, c, [zeros(ni,1); -inf(ne,1)], inf(ni+ne,1), ni+ne);
    x = -(Hif + HiGt*l);
    lambda.ineqlin = l(1:ni); lambda.eqlin = l(ni+1:end);
  end
  fval = 0.5*x'*H*x + f'*x; exitflag = 1; output = struct();
end

function x = bounded_qp(H, f, lb, ub, n)
  if isempty(lb), lb = -inf(n,1); end
  if isempty(ub), ub = inf(n,1); end
  x0 = min(max(zeros(n,1), lb), ub);
  il = find(isfinite(lb)); iu = find(isfinite(ub));
  Ain = [sparse(1:numel(il), il, 1, numel(il), n); -sparse(1:numel(iu), iu, 1, numel(iu), n)];
  bin = [lb(il); -ub(iu)];
  [x, ~, info] = __qp__(x0, full(H), f, zeros(0,n), zeros(0,1), full(Ain), bin, 2000, 1e-12);
  if info ~= 0, warning('quadprog shim: __qp__ info %d', info); end
end
