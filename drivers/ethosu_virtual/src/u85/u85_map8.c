/* ethosu-porting-kit virtual NPU: Ethos-U85 8-bit maps, each output byte a function of one
 * input byte (the transposing copies, unary and scalar elementwise operations). */
#include "u85/u85.h"

/* The operation axes of f (memory axis i takes operation axis axis[i]; `reverse` as
 * activation_reverse), if f is one tile of 8-bit elements over its extent; else 0. */
int u85_axes_of(const struct fm *f, const int axis[3], int reverse, struct axis_map m[3])
{
    if (f->elem != 1 || f->h > f->h0 || f->w > f->w0) {
        return 0;
    }
    const int ext[3] = {f->h, f->w, f->c};
    for (int i = 0; i < 3; i++) {
        struct axis_map *a = &m[axis[i]];
        a->stride = i == 0 ? f->sy : (i == 1 ? f->sx : 1);
        a->brick = i == 2 && f->brick;
        a->sc = f->sc;
        a->rev = reverse == i + 1;
        a->ext = ext[i];
    }
    return 1;
}

/* Operations with an 8-bit map this large take the table (256 evaluations) instead. */
#define MAP8_MIN_VALUES 256

/* 1 if the operation can run as map8 (and ia, oa set): an untransposed 8-bit IFM of the
 * operation's extent, an 8-bit OFM, both one tile. */
int u85_map8_ok(const struct fm *in, const struct ofm85 *o, struct axis_map ia[3],
                struct axis_map oa[3])
{
    static const int identity[3] = {0, 1, 2};
    return (size_t)o->h * (size_t)o->w * (size_t)o->c >= MAP8_MIN_VALUES && in->h == o->h &&
           in->w == o->w && in->c == o->c && u85_axes_of(in, identity, 0, ia) &&
           u85_axes_of(&o->fm, o->axis, o->reverse, oa);
}

/* OFM(y, x, c) = table[IFM(y, x, c)] over the operation's extent, transpose and reverse included. */
void u85_map8(const struct fm *in, const struct axis_map ia[3], const struct ofm85 *o,
              const struct axis_map oa[3], const uint8_t table[256])
{
    const uint8_t *ib = in->mem + in->base[0];
    uint8_t *ob = o->fm.mem + o->fm.base[0];
    for (int y = 0; y < o->h; y++) {
        for (int x = 0; x < o->w; x++) {
            const uint8_t *ip = ib + axis_off(&ia[0], y) + axis_off(&ia[1], x);
            uint8_t *op = ob + axis_off(&oa[0], y) + axis_off(&oa[1], x);
            for (int c = 0; c < o->c; c++) {
                op[axis_off(&oa[2], c)] = table[ip[axis_off(&ia[2], c)]];
            }
        }
    }
}
