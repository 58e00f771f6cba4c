// The grammar of .tyl files and of standalone layout expressions.
//
// The grammar only describes syntax; it has no actions. The frontend turns the parse
// tree into an AST (frontend/BuildAst.cpp) and semantic analysis gives meaning to
// names: whether `f32[32, 4]` is a type, `As[stage]` an index, `Frag` a layout.
// docs/language.md describes the language for users.
grammar Tylo;

// ---- Entry points --------------------------------------------------------------

file        : importDecl* topDecl* EOF ;
layoutOnly  : expr EOF ;                       // the argument of `tyloc layout`

// ---- Declarations --------------------------------------------------------------

importDecl  : IMPORT STRING ';' ;                  // another file's constants and layouts

topDecl
    : CONST IDENT '=' expr ';'                                            # constDecl
    | LAYOUT IDENT '=' expr ';'                                           # layoutDecl
    | KERNEL IDENT typeParams? '(' paramList? ')' launchClause block      # kernelDecl
    ;

typeParams  : '<' typeParam (',' typeParam)* '>' ;
typeParam   : IDENT IN '(' genericChoice (',' genericChoice)* ','? ')' ;
genericChoice : IDENT | INT ;                  // an element type, or an integer constant

paramList   : param (',' param)* ','? ;
param
    : IDENT ':' IDENT                                                     # scalarParam
    | IDENT ':' space=IDENT dtype=IDENT '[' exprList ']'
          (':' layout=expr)? (ALIGN align=expr)?                          # tensorParam
    ;

launchClause : LAUNCH '(' argList? ')' ;

// ---- Statements ----------------------------------------------------------------
// `for k in range(...)`, or `for (m, n) in tiles(...)`: a tile's coordinates. The parentheses
// are optional here, so that a token out of place is reported where it stands; the AST builder
// checks that they pair.

block : '{' stmt* '}' ;

stmt
    : LET IDENT '=' expr ';'                                              # letStmt
    | target=expr op=('=' | '+=' | '-=' | '*=') value=expr ';'            # assignStmt
    | FOR open='('? IDENT (',' IDENT)* close=')'? IN expr block           # forStmt
    | PIPELINE '(' argList? ')'
          FOR open='('? IDENT (',' IDENT)* close=')'? IN expr block       # pipelineStmt
    | ifClause                                                            # ifStmt
    | expr ';'                                                            # exprStmt
    | block                                                               # blockStmt
    ;

// `else if` chains are a list, not nested clauses, so a long chain cannot exhaust the
// parser's stack.
ifClause : IF expr block (ELSE IF expr block)* (ELSE elseBlock=block)? ;

// ---- Expressions ---------------------------------------------------------------
// Precedence from tightest to loosest. `@` binds like `*`, so `S[...] + 5@warpid`
// reads as a layout plus an offset on `warpid`.

expr
    : primary                                                             # primaryExpr
    | expr '.' IDENT                                                      # memberExpr
    | expr '(' argList? ')'                                               # callExpr
    | expr '[' exprList ']'                                               # indexExpr
    | op=('-' | '!') expr                                                 # unaryExpr
    | '@' IDENT                                                           # unitAxisExpr
    | expr op=('*' | '/' | '%') expr                                      # binaryExpr
    | expr '@' IDENT                                                      # axisExpr
    | expr op=('+' | '-') expr                                            # binaryExpr
    | expr op=('<<' | '>>') expr                                          # binaryExpr
    | expr op=('<' | '<=' | '>' | '>=') expr                              # binaryExpr
    | expr op=('==' | '!=') expr                                          # binaryExpr
    | expr op='&' expr                                                    # binaryExpr
    | expr op='^' expr                                                    # binaryExpr
    | expr op='|' expr                                                    # binaryExpr
    | expr op='&&' expr                                                   # binaryExpr
    | expr op='||' expr                                                   # binaryExpr
    ;

primary
    : INT                                                                 # intLit
    | FLOAT                                                               # floatLit
    | IDENT                                                               # nameRef
    | '(' ')'                                                             # emptyTuple
    | '(' expr ')'                                                        # parenExpr
    | '(' expr ',' ')'                                                    # tupleExpr
    | '(' expr (',' expr)+ ','? ')'                                       # tupleExpr
    | kind=(SHARD | REPLICA) '[' extents=exprList (':' strides=exprList)? ']' # iterSpec
    ;

exprList : expr (',' expr)* ','? ;

argList  : arg (',' arg)* ','? ;
arg      : (argName '=')? expr ;
// Keywords that read naturally as argument names: alloc_local(f32[4], layout = L).
argName  : IDENT | LAYOUT | ALIGN | LAUNCH ;

// ---- Tokens --------------------------------------------------------------------

IMPORT   : 'import' ;
CONST    : 'const' ;
LAYOUT   : 'layout' ;
KERNEL   : 'kernel' ;
LAUNCH   : 'launch' ;
ALIGN    : 'align' ;
LET      : 'let' ;
FOR      : 'for' ;
IN       : 'in' ;
IF       : 'if' ;
ELSE     : 'else' ;
PIPELINE : 'pipeline' ;
SHARD    : 'S' ;
REPLICA  : 'R' ;

IDENT : [a-zA-Z_] [a-zA-Z_0-9]* ;
FLOAT
    : DIGITS '.' DIGITS? EXPONENT?
    | '.' DIGITS EXPONENT?
    | DIGITS EXPONENT
    ;
STRING : '"' ~["\r\n]* '"' ;                 // a path; no escapes

INT : DIGITS | '0' [xX] [0-9a-fA-F] ('_'? [0-9a-fA-F])* ;

fragment DIGITS   : [0-9] ('_'? [0-9])* ;
fragment EXPONENT : [eE] [+-]? DIGITS ;

LINE_COMMENT  : '//' ~[\r\n]* -> channel(HIDDEN) ;
BLOCK_COMMENT : '/*' .*? '*/' -> channel(HIDDEN) ;
// A comment that never ends: matched only when no `*/` follows, and reported as such.
UNTERMINATED_COMMENT : '/*' ( ~'*' | '*'+ ~[*/] )* '*'* EOF ;
WS            : [ \t\r\n]+ -> channel(HIDDEN) ;

// Anything else is reported by the lexer error listener with its location.
