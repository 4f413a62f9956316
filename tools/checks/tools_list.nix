# What tools/checks/flake_check.sh asserts of tools/bootstrap/tools.toml itself, before the
# shell is evaluated: every entry names its nixpkgs attributes, every attribute has the record
# of where it was confirmed in nixpkgs, nothing is recorded that no entry uses (the stand-in
# nixpkgs provides exactly the records), and every Python environment of the bootstrap
# (tools/bootstrap/python/<name>) has its [[venv]] entry. The result is the list of errors.
{ toml, venvDirs }:
let
  list = builtins.fromTOML (builtins.readFile toml);
  attrs = list.nixpkgs.attr or { };
  tools = list.tool or [ ];
  venvs = list.venv or [ ];
  isRev = s: builtins.isString s && builtins.match "[0-9a-f]{40}" s != null;
  toolName = t: if t ? apt then "[[tool]] apt = \"${t.apt}\"" else "[[tool]] nix = ${builtins.toJSON (t.nix or [ ])}";
  entryErrors = what: e:
    (if builtins.isList (e.nix or null) && e.nix != [ ] then [ ]
    else [ "${what}: no `nix` attributes (the shell would lack it; find its nixpkgs attribute)" ])
    ++ (if builtins.isString (e.for or null) && e.for != "" then [ ] else [ "${what}: no `for` (what needs it)" ])
    ++ (if builtins.elem (e.shell or "packages") [ "packages" "buildInputs" ] then [ ]
    else [ "${what}: shell = \"${e.shell}\" is neither \"packages\" nor \"buildInputs\"" ])
    ++ map (a: "${what}: nixpkgs attribute `${a}` has no [nixpkgs.attr] record (confirm it in nixpkgs at [nixpkgs] rev, record its file and seen_at)")
      (builtins.filter (a: !(attrs ? ${a})) (e.nix or [ ]));
  used = builtins.concatMap (e: e.nix or [ ]) (tools ++ venvs);
  venvNames = map (v: v.name or "") venvs;
in
(if isRev (list.nixpkgs.rev or null) then [ ] else [ "[nixpkgs] rev is not a 40-hex-digit nixpkgs commit" ])
++ builtins.concatMap (t: entryErrors (toolName t) t) tools
++ builtins.concatMap (v: entryErrors "[[venv]] name = \"${v.name or "?"}\"" v) venvs
++ builtins.concatMap
  (a:
    let r = attrs.${a}; in
    (if builtins.isString (r.file or null) && builtins.match "pkgs/.*" r.file != null then [ ]
    else [ "[nixpkgs.attr] ${a}: no `file` (the nixpkgs file that defines it)" ])
    ++ (if isRev (r.seen_at or null) then [ ] else [ "[nixpkgs.attr] ${a}: `seen_at` is not a 40-hex-digit commit" ])
    ++ (if builtins.elem a used then [ ] else [ "[nixpkgs.attr] ${a}: recorded but no entry uses it (remove the record)" ]))
  (builtins.attrNames attrs)
++ map (d: "tools/bootstrap/python/${d} has no [[venv]] name = \"${d}\" entry (what of nixpkgs does it need?)")
  (builtins.filter (d: !(builtins.elem d venvNames)) venvDirs)
++ map (n: "[[venv]] name = \"${n}\": no tools/bootstrap/python/${n}")
  (builtins.filter (n: !(builtins.elem n venvDirs)) venvNames)
