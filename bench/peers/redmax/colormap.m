function varargout = colormap(varargin)
  % Shim for a run without graphics: REDMAX's Scene only reads the colours to paint bodies.
  varargout = {repmat([0.5 0.5 0.5], 7, 1)};
end
