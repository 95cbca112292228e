function o = optimoptions(varargin)
  % Shim: REDMAX only turns the solvers' display off; our quadprog.m takes no options.
  o = optimset('Display', 'off');
end
