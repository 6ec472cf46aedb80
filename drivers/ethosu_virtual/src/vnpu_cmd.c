/*
 * ethosu-porting-kit virtual NPU: the U55/U65 command table and the disassembler.
 *
 * Written from the kit's command-stream reference (section 4). The table is data
 * for validation (an unknown code stops the stream) and for the disassembler the
 * decoder tests compare with Vela's own register listing; execution reads the
 * register file directly.
 */
#include "vnpu.h"

#include <stdio.h>
#include <string.h>

/* Field spec: "name=Shi.lo[.enum]" separated by ';', S = p (param) or w (payload). */
static const struct vnpu_cmd_desc commands[] = {
    {0x0000, "NPU_OP_STOP", "mask=p15.0"},
    {0x0001, "NPU_OP_IRQ", "mask=p15.0"},
    {0x0002, "NPU_OP_CONV", ""},
    {0x0003, "NPU_OP_DEPTHWISE", ""},
    {0x0005, "NPU_OP_POOL", "pooling_mode=p2.0.pooling_mode"},
    {0x0006, "NPU_OP_ELEMENTWISE", "elementwise_mode=p5.0.elementwise_mode"},
    {0x0010, "NPU_OP_DMA_START", ""},
    {0x0011, "NPU_OP_DMA_WAIT", "k=p3.0"},
    {0x0012, "NPU_OP_KERNEL_WAIT", "n=p1.0"},
    {0x0013, "NPU_OP_PMU_MASK", "enable=p0.0"},
    {0x0100, "NPU_SET_IFM_PAD_TOP", "pad=p6.0"},
    {0x0101, "NPU_SET_IFM_PAD_LEFT", "pad=p6.0"},
    {0x0102, "NPU_SET_IFM_PAD_RIGHT", "pad=p7.0"},
    {0x0103, "NPU_SET_IFM_PAD_BOTTOM", "pad=p7.0"},
    {0x0104, "NPU_SET_IFM_DEPTH_M1", "depth_m1=p15.0"},
    {0x0105, "NPU_SET_IFM_PRECISION",
     "activation_type=p0.0.activation_type;activation_precision=p3.2.activation_precision;"
     "activation_format=p7.6.activation_format;scale_mode=p9.8.ifm_scale_mode;round_mode=p15.14.round_mode"},
    {0x0107, "NPU_SET_IFM_UPSCALE", "mode=p1.0.ifm_upscale_mode"},
    {0x0109, "NPU_SET_IFM_ZERO_POINT", "zero_point=p15.0"},
    {0x010a, "NPU_SET_IFM_WIDTH0_M1", "width_m1=p15.0"},
    {0x010b, "NPU_SET_IFM_HEIGHT0_M1", "height_m1=p15.0"},
    {0x010c, "NPU_SET_IFM_HEIGHT1_M1", "height_m1=p15.0"},
    {0x010d, "NPU_SET_IFM_IB_END", "ib_end=p5.0"},
    {0x010f, "NPU_SET_IFM_REGION", "region=p2.0;custom_dma_cs=p15.15.custom_dma_cs"},
    {0x0111, "NPU_SET_OFM_WIDTH_M1", "width_m1=p15.0"},
    {0x0112, "NPU_SET_OFM_HEIGHT_M1", "height_m1=p15.0"},
    {0x0113, "NPU_SET_OFM_DEPTH_M1", "depth_m1=p15.0"},
    {0x0114, "NPU_SET_OFM_PRECISION",
     "activation_type=p0.0.activation_type;activation_precision=p2.1.activation_precision;"
     "activation_format=p7.6.activation_format;scale_mode=p8.8.ofm_scale_mode;round_mode=p15.14.round_mode"},
    {0x0115, "NPU_SET_OFM_BLK_WIDTH_M1", "width_m1=p5.0"},
    {0x0116, "NPU_SET_OFM_BLK_HEIGHT_M1", "height_m1=p4.0"},
    {0x0117, "NPU_SET_OFM_BLK_DEPTH_M1", "depth_m1=p6.0"},
    {0x0118, "NPU_SET_OFM_ZERO_POINT", "zero_point=p15.0"},
    {0x011a, "NPU_SET_OFM_WIDTH0_M1", "width_m1=p15.0"},
    {0x011b, "NPU_SET_OFM_HEIGHT0_M1", "height_m1=p15.0"},
    {0x011c, "NPU_SET_OFM_HEIGHT1_M1", "height_m1=p15.0"},
    {0x011f, "NPU_SET_OFM_REGION", "region=p2.0;custom_dma_cs=p15.15.custom_dma_cs"},
    {0x0120, "NPU_SET_KERNEL_WIDTH_M1", "width_m1=p15.0"},
    {0x0121, "NPU_SET_KERNEL_HEIGHT_M1", "height_m1=p15.0"},
    {0x0122, "NPU_SET_KERNEL_STRIDE",
     "stride_x_lsb=p0.0;stride_y_lsb=p1.1;weight_order=p2.2.weight_order;dilation_x=p3.3.kernel_dilation;"
     "dilation_y=p4.4.kernel_dilation;decomposition=p5.5.kernel_decomposition;stride_x_msb=p6.6;stride_y_msb=p9.9"},
    {0x0123, "NPU_SET_PARALLEL_MODE", "parallel_mode=p0.0"},
    {0x0124, "NPU_SET_ACC_FORMAT", "acc_format=p1.0.acc_format"},
    {0x0125, "NPU_SET_ACTIVATION",
     "activation_function=p4.0.activation_function;activation_clip_range=p14.12.activation_clip_range"},
    {0x0126, "NPU_SET_ACTIVATION_MIN", "clip_boundary=p15.0"},
    {0x0127, "NPU_SET_ACTIVATION_MAX", "clip_boundary=p15.0"},
    {0x0128, "NPU_SET_WEIGHT_REGION", "region=p2.0;custom_dma_cs=p15.15.custom_dma_cs"},
    {0x0129, "NPU_SET_SCALE_REGION", "region=p2.0;custom_dma_cs=p15.15.custom_dma_cs"},
    {0x012d, "NPU_SET_AB_START", "ab_start=p5.0"},
    {0x012f, "NPU_SET_BLOCKDEP", "blockdep=p1.0"},
    {0x0130, "NPU_SET_DMA0_SRC_REGION",
     "region=p2.0;region_mode=p8.8.dma_region_mode;stride_mode=p10.9.dma_stride_mode;custom_dma_cs=p15.15.custom_dma_cs"},
    {0x0131, "NPU_SET_DMA0_DST_REGION",
     "region=p2.0;region_mode=p8.8.dma_region_mode;stride_mode=p10.9.dma_stride_mode;custom_dma_cs=p15.15.custom_dma_cs"},
    {0x0132, "NPU_SET_DMA0_SIZE0", "size=p15.0"},
    {0x0133, "NPU_SET_DMA0_SIZE1", "size=p15.0"},
    {0x0180, "NPU_SET_IFM2_BROADCAST",
     "broadcast_h=p0.0.broadcast_mode;broadcast_w=p1.1.broadcast_mode;broadcast_c=p2.2.broadcast_mode;"
     "operand_order=p6.6.ifm2_operand_order;broadcast_constant=p7.7.broadcast_mode"},
    {0x0181, "NPU_SET_IFM2_SCALAR", "scalar=p15.0"},
    {0x0185, "NPU_SET_IFM2_PRECISION",
     "activation_type=p0.0.activation_type;activation_precision=p3.2.activation_precision;"
     "activation_format=p7.6.activation_format"},
    {0x0189, "NPU_SET_IFM2_ZERO_POINT", "zero_point=p15.0"},
    {0x018a, "NPU_SET_IFM2_WIDTH0_M1", "width_m1=p15.0"},
    {0x018b, "NPU_SET_IFM2_HEIGHT0_M1", "height_m1=p15.0"},
    {0x018c, "NPU_SET_IFM2_HEIGHT1_M1", "height_m1=p15.0"},
    {0x018d, "NPU_SET_IFM2_IB_START", "ib_start=p5.0"},
    {0x018f, "NPU_SET_IFM2_REGION", "region=p2.0"},
    {0x4000, "NPU_SET_IFM_BASE0", "addr=w31.0"},
    {0x4001, "NPU_SET_IFM_BASE1", "addr=w31.0"},
    {0x4002, "NPU_SET_IFM_BASE2", "addr=w31.0"},
    {0x4003, "NPU_SET_IFM_BASE3", "addr=w31.0"},
    {0x4004, "NPU_SET_IFM_STRIDE_X", "addr=w31.0"},
    {0x4005, "NPU_SET_IFM_STRIDE_Y", "addr=w31.0"},
    {0x4006, "NPU_SET_IFM_STRIDE_C", "addr=w31.0"},
    {0x4010, "NPU_SET_OFM_BASE0", "addr=w31.0"},
    {0x4011, "NPU_SET_OFM_BASE1", "addr=w31.0"},
    {0x4012, "NPU_SET_OFM_BASE2", "addr=w31.0"},
    {0x4013, "NPU_SET_OFM_BASE3", "addr=w31.0"},
    {0x4014, "NPU_SET_OFM_STRIDE_X", "addr=w31.0"},
    {0x4015, "NPU_SET_OFM_STRIDE_Y", "addr=w31.0"},
    {0x4016, "NPU_SET_OFM_STRIDE_C", "addr=w31.0"},
    {0x4020, "NPU_SET_WEIGHT_BASE", "addr=w31.0"},
    {0x4021, "NPU_SET_WEIGHT_LENGTH", "length=w31.0"},
    {0x4022, "NPU_SET_SCALE_BASE", "addr=w31.0"},
    {0x4023, "NPU_SET_SCALE_LENGTH", "length=w19.0"},
    {0x4024, "NPU_SET_OFM_SCALE", "shift=p5.0;scale=w31.0"},
    {0x4025, "NPU_SET_OPA_SCALE", "shift=p5.0;scale=w31.0"},
    {0x4026, "NPU_SET_OPB_SCALE", "scale=w15.0"},
    {0x4030, "NPU_SET_DMA0_SRC", "addr=w31.0"},
    {0x4031, "NPU_SET_DMA0_DST", "addr=w31.0"},
    {0x4032, "NPU_SET_DMA0_LEN", "addr=w31.0"},
    {0x4033, "NPU_SET_DMA0_SKIP0", "addr=w31.0"},
    {0x4034, "NPU_SET_DMA0_SKIP1", "addr=w31.0"},
    {0x4080, "NPU_SET_IFM2_BASE0", "addr=w31.0"},
    {0x4081, "NPU_SET_IFM2_BASE1", "addr=w31.0"},
    {0x4082, "NPU_SET_IFM2_BASE2", "addr=w31.0"},
    {0x4083, "NPU_SET_IFM2_BASE3", "addr=w31.0"},
    {0x4084, "NPU_SET_IFM2_STRIDE_X", "addr=w31.0"},
    {0x4085, "NPU_SET_IFM2_STRIDE_Y", "addr=w31.0"},
    {0x4086, "NPU_SET_IFM2_STRIDE_C", "addr=w31.0"},
    {0x4090, "NPU_SET_WEIGHT1_BASE", "addr=w31.0"},
    {0x4091, "NPU_SET_WEIGHT1_LENGTH", "length=w31.0"},
    {0x4092, "NPU_SET_SCALE1_BASE", "addr=w31.0"},
    {0x4093, "NPU_SET_SCALE1_LENGTH", "length=w19.0"},
    {0x40a0, "NPU_SET_USER_DEFINED0", "user_reg=w31.0"},
    {0x40a1, "NPU_SET_USER_DEFINED1", "user_reg=w31.0"},
    {0x40a2, "NPU_SET_USER_DEFINED2", "user_reg=w31.0"},
    {0x40a3, "NPU_SET_USER_DEFINED3", "user_reg=w31.0"},
    {0x40a4, "NPU_SET_USER_DEFINED4", "user_reg=w31.0"},
    {0x40a5, "NPU_SET_USER_DEFINED5", "user_reg=w31.0"},
    {0x40a6, "NPU_SET_USER_DEFINED6", "user_reg=w31.0"},
    {0x40a7, "NPU_SET_USER_DEFINED7", "user_reg=w31.0"},
};

/* Enumerations: "value=NAME,..." ; printed as <ENUM>_<NAME>. */
static const struct vnpu_enum_desc enums[] = {
    {"acc_format", "0=I32,1=I40,2=F16"},
    {"activation_clip_range", "0=OFM_PRECISION,2=FORCE_UINT8,3=FORCE_INT8,5=FORCE_INT16"},
    {"activation_format", "0=NHWC,1=NHCWB16"},
    {"activation_function",
     "0=RELU,3=TANH,4=SIGMOID,16=TABLE_0,17=TABLE_1,18=TABLE_2,19=TABLE_3,20=TABLE_4,21=TABLE_5,22=TABLE_6,23=TABLE_7"},
    {"activation_precision", "0=B8,1=B16,2=B32,3=B64"},
    {"activation_type", "0=UNSIGNED,1=SIGNED"},
    {"broadcast_mode", "0=DISABLE,1=ENABLE"},
    {"custom_dma_cs", "0=DISABLE,1=ENABLE"},
    {"dma_region_mode", "0=EXTERNAL,1=INTERNAL"},
    {"dma_stride_mode", "0=D1"},
    {"elementwise_mode", "0=MUL,1=ADD,2=SUB,3=MIN,4=MAX,5=LRELU,6=ABS,7=CLZ,8=SHR,9=SHL"},
    {"ifm2_operand_order", "0=ORDER_B,1=ORDER_A"},
    {"ifm_scale_mode", "0=OPA_OPB_16,1=OPA_32,2=OPB_32"},
    {"ifm_upscale_mode", "0=NONE,1=NEAREST,2=ZEROS"},
    {"kernel_decomposition", "0=D8X8,1=D4X4"},
    {"kernel_dilation", "0=NONE,1=X2"},
    {"ofm_scale_mode", "0=PER_CHANNEL,1=GLOBAL"},
    {"pooling_mode", "0=MAX,1=AVERAGE,2=REDUCE_SUM"},
    {"round_mode", "0=DBL,1=TRUNCATE,2=NATURAL"},
    {"weight_order", "0=DEPTH_FIRST,1=PART_KERNEL_FIRST"},
};

const struct vnpu_isa vnpu_isa_u55 = {commands, sizeof(commands) / sizeof(commands[0]), enums,
                                      sizeof(enums) / sizeof(enums[0])};

const struct vnpu_cmd_desc *vnpu_isa_find(const struct vnpu_isa *isa, uint32_t code)
{
    size_t lo = 0;
    size_t hi = isa->ncommands;
    const struct vnpu_cmd_desc *commands_ = isa->commands;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (commands_[mid].code == code) {
            return &commands_[mid];
        }
        if (commands_[mid].code < code) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return NULL;
}

uint32_t vnpu_code_of(uint32_t word0)
{
    uint32_t control = (word0 >> 14) & 3u;
    /* The header's valid() also takes control 2 as a cmd1; normalise it to 0x4000. */
    return (word0 & 0x3ffu) | (control != 0 ? 0x4000u : 0u);
}

static void append(char *buf, size_t len, size_t *used, const char *text)
{
    size_t n = strlen(text);
    if (*used + n + 1 > len) {
        n = *used + 1 < len ? len - *used - 1 : 0;
    }
    memcpy(buf + *used, text, n);
    *used += n;
    buf[*used] = '\0';
}

/* "0=I32,1=I40" -> the name of `value` uppercased with the enum prefix, or NULL. */
static int enum_name(const struct vnpu_isa *isa, const char *enum_id, size_t enum_len,
                     uint32_t value, char *out, size_t out_len)
{
    const struct vnpu_enum_desc *enums_ = isa->enums;
    for (size_t e = 0; e < isa->nenums; e++) {
        if (strlen(enums_[e].name) != enum_len || strncmp(enums_[e].name, enum_id, enum_len) != 0) {
            continue;
        }
        const char *p = enums_[e].values;
        while (*p) {
            unsigned long v = 0;
            while (*p >= '0' && *p <= '9') {
                v = v * 10u + (unsigned long)(*p++ - '0');
            }
            p++; /* '=' */
            const char *start = p;
            while (*p && *p != ',') {
                p++;
            }
            if (v == value) {
                size_t used = 0;
                for (size_t i = 0; i < enum_len && used + 1 < out_len; i++) {
                    char c = enum_id[i];
                    out[used++] = (char)((c >= 'a' && c <= 'z') ? c - 'a' + 'A' : c);
                }
                if (used + 1 < out_len) {
                    out[used++] = '_';
                }
                for (const char *q = start; q < p && used + 1 < out_len; q++) {
                    out[used++] = *q;
                }
                out[used] = '\0';
                return 0;
            }
            if (*p == ',') {
                p++;
            }
        }
    }
    return -1;
}

int ethosu_virtual_disasm(const uint32_t *words, size_t nwords, size_t *index, char *buf,
                          size_t len)
{
    return vnpu_isa_disasm(&vnpu_isa_u55, words, nwords, index, buf, len);
}

int ethosu_virtual_disasm_product(uint32_t product, const uint32_t *words, size_t nwords,
                                  size_t *index, char *buf, size_t len)
{
    return vnpu_isa_disasm(product == VNPU_PRODUCT_U85 ? &vnpu_isa_u85 : &vnpu_isa_u55, words,
                           nwords, index, buf, len);
}

int vnpu_isa_disasm(const struct vnpu_isa *isa, const uint32_t *words, size_t nwords, size_t *index,
                    char *buf, size_t len)
{
    char tmp[96];
    size_t used = 0;
    if (len == 0) {
        return -1;
    }
    buf[0] = '\0';
    if (*index >= nwords) {
        append(buf, len, &used, "end of stream");
        return -1;
    }
    uint32_t w0 = words[*index];
    uint32_t code = vnpu_code_of(w0);
    uint32_t param = w0 >> 16;
    uint32_t payload = 0;
    const struct vnpu_cmd_desc *cmd = vnpu_isa_find(isa, code);
    if ((code & 0x4000u) != 0) {
        if (*index + 1 >= nwords) {
            snprintf(buf, len, "0x%06lx %04lx truncated cmd1", (unsigned long)(*index * 4u),
                     (unsigned long)code);
            return -1;
        }
        payload = words[*index + 1];
    }
    snprintf(tmp, sizeof(tmp), "0x%06lx %04lx ", (unsigned long)(*index * 4u), (unsigned long)code);
    append(buf, len, &used, tmp);
    if (cmd == NULL) {
        snprintf(tmp, sizeof(tmp), "UNKNOWN param=%lu", (unsigned long)param);
        append(buf, len, &used, tmp);
        return -1;
    }
    append(buf, len, &used, cmd->name);
    *index += (code & 0x4000u) ? 2u : 1u;
    const char *f = cmd->fields;
    while (*f) {
        const char *name = f;
        while (*f != '=') {
            f++;
        }
        size_t name_len = (size_t)(f - name);
        f++;
        char src = *f++;
        unsigned hi = 0;
        unsigned lo = 0;
        while (*f >= '0' && *f <= '9') {
            hi = hi * 10u + (unsigned)(*f++ - '0');
        }
        f++; /* '.' */
        while (*f >= '0' && *f <= '9') {
            lo = lo * 10u + (unsigned)(*f++ - '0');
        }
        const char *enum_id = NULL;
        size_t enum_len = 0;
        if (*f == '.') {
            enum_id = ++f;
            while (*f && *f != ';') {
                f++;
            }
            enum_len = (size_t)(f - enum_id);
        }
        if (*f == ';') {
            f++;
        }
        uint32_t raw = src == 'p' ? param : payload;
        uint32_t width = hi - lo + 1u;
        uint32_t value = width >= 32u ? raw : (raw >> lo) & ((1u << width) - 1u);
        if (src == 'a') {
            /* a 40-bit address: addr_hi in param bits 7:0, addr_lo in the payload */
            unsigned long long addr = ((unsigned long long)(param & 0xffu) << 32) | payload;
            snprintf(tmp, sizeof(tmp), " %.*s=%s", (int)name_len, name, VNPU_U64(addr));
            append(buf, len, &used, tmp);
            continue;
        }
        append(buf, len, &used, " ");
        snprintf(tmp, sizeof(tmp), "%.*s=", (int)name_len, name);
        append(buf, len, &used, tmp);
        char ename[64];
        if (enum_id != NULL && enum_len == 6 && strncmp(enum_id, "signed", 6) == 0) {
            long sv = (width < 32u && (value >> (width - 1u)) != 0) ? (long)value - (1L << width)
                                                                    : (long)value;
            snprintf(tmp, sizeof(tmp), "%ld", sv);
            append(buf, len, &used, tmp);
        } else if (enum_id != NULL &&
                   enum_name(isa, enum_id, enum_len, value, ename, sizeof(ename)) == 0) {
            append(buf, len, &used, ename);
        } else {
            snprintf(tmp, sizeof(tmp), "%lu", (unsigned long)value);
            append(buf, len, &used, tmp);
        }
    }
    return 0;
}
