/* C for the mask traces (tests/c_trace.sh): typedef names the masks must read
   as the declarations in scope say (grammars/c.lark, note [c: typedef names]). */
typedef unsigned long size_t;
typedef struct node { struct node *next; size_t len; const char *text; } node_t, *node_p;
typedef int (*cmp_fn)(const void *, const void *);
enum color { RED, GREEN = 2, BLUE };
typedef enum color color_t;

static size_t length(node_p head)
{
    size_t n = 0;
    for (node_t *p = head; p; p = p->next)
        n += p->len;
    return n;
}

static int by_len(const void *a, const void *b)
{
    const node_t *x = a, *y = b;
    return x->len < y->len ? -1 : x->len > y->len;
}

int count(node_p head, cmp_fn cmp)
{
    int size_t = 3; /* an ordinary name shadows the typedef name in this block */
    size_t *= 2;
    {
        typedef long count_t;
        count_t c = size_t;
        (void)c;
    }
    node_t *p = head;
    int total = 0;
    while (p && p->next) {
        total += cmp(p, p->next) < 0;
        p = p->next;
    }
    color_t k = BLUE;
    return total + (int)k + size_t;
}

size_t twice(size_t n) { return n * 2; }
int use(void) { return count(0, by_len) + (int)length(0) + (int)twice(RED); }
